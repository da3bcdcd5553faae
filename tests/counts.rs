//! Published position counts (DESIGN.md section 4): every one is a test.

use nowdb::index::total_positions;
use nowdb::{Material, Slice};

fn count(name: &str) -> u64 {
    name.parse::<Slice>().unwrap().count()
}

fn node_count(m: &Material) -> u64 {
    m.slices().iter().map(|s| s.count()).sum()
}

/// Positions with `b` black and `w` white pieces (1994 paper, Table 2).
fn split_count(b: u32, w: u32) -> u64 {
    Material::all_with_pieces(b + w)
        .iter()
        .filter(|m| m.black() == b && m.white() == w)
        .map(node_count)
        .sum()
}

#[test]
fn totals_for_1_to_10_pieces() {
    // 1994 paper Table 1, 2003 paper Table 4 (9 pieces), DESIGN.md (10 pieces).
    let published: [u64; 10] = [
        120,
        6_972,
        261_224,
        7_092_774,
        148_688_232,
        2_503_611_964,
        34_779_531_480,
        406_309_208_481,
        4_048_627_642_976,
        34_778_882_769_216,
    ];
    for (i, &want) in published.iter().enumerate() {
        assert_eq!(total_positions(i as u32 + 1), want, "{} pieces", i + 1);
    }
}

#[test]
fn table_2_material_splits() {
    // 1994 paper, Table 2 (black pieces by white pieces). The paper prints 1v1 as "23,488";
    // its own 2-piece total (6,972 = 3,488 + 2 x 1,742) and the 2003 paper's Table 4 ("1-1
    // 3,488") show the right figure is 3,488.
    let rows: [&[u64]; 7] = [
        &[
            3_488,
            98_016,
            1_773_192,
            23_204_660,
            233_999_928,
            1_891_451_952,
            12_586_073_760,
        ],
        &[
            98_016,
            2_662_932,
            46_520_744,
            587_139_846,
            5_702_475_480,
            44_328_555_960,
        ],
        &[
            1_773_192,
            46_520_744,
            783_806_128,
            9_527_629_380,
            88_991_228_360,
        ],
        &[23_204_660, 587_139_846, 9_527_629_380, 111_378_534_401],
        &[233_999_928, 5_702_475_480, 88_991_228_360],
        &[1_891_451_952, 44_328_555_960],
        &[12_586_073_760],
    ];
    for (b, row) in rows.iter().enumerate() {
        for (w, &want) in row.iter().enumerate() {
            let (b, w) = (b as u32 + 1, w as u32 + 1);
            assert_eq!(split_count(b, w), want, "{b} black v {w} white");
        }
    }
}

#[test]
fn table_4_of_2003_one_sided_and_splits() {
    // "X - 0" rows count both colours; "X - Y" rows count X v Y plus Y v X.
    for (b, w, want) in [
        (2, 0, 3_484u64),
        (3, 0, 65_192),
        (4, 0, 883_458),
        (5, 0, 9_237_424),
        (6, 0, 77_526_288),
        (7, 0, 536_417_856),
        (8, 0, 3_118_957_920),
        (9, 0, 15_455_930_880),
        (10, 0, 65_975_569_920),
        (2, 1, 196_032),
        (3, 1, 3_546_384),
        (4, 1, 46_409_320),
        (3, 2, 93_041_488),
        (5, 1, 467_999_856),
        (4, 2, 1_174_279_692),
        (6, 1, 3_782_903_904),
        (5, 2, 11_404_950_960),
        (4, 3, 19_055_258_760),
        (7, 1, 25_172_147_520),
        (6, 2, 88_657_111_920),
        (5, 3, 177_982_456_720),
        (8, 1, 140_531_639_040),
        (7, 2, 566_442_589_440),
        (6, 3, 1_328_448_083_840),
        (5, 4, 1_997_749_399_776),
    ] {
        assert_eq!(split_count(b, w) + split_count(w, b), want, "{b}-{w}");
    }
    assert_eq!(split_count(2, 2), 2_662_932);
    assert_eq!(split_count(3, 3), 783_806_128);
    assert_eq!(split_count(4, 4), 111_378_534_401);
    assert_eq!(split_count(5, 5), 8_586_481_972_128);
}

#[test]
fn table_3_node_3212_all_49_slices() {
    // 1994 paper, Table 3: rows are Black's leading rank 6..0, columns White's 6..0.
    let table: [[u64; 7]; 7] = [
        [
            465_519_600,
            389_516_400,
            313_513_200,
            237_510_000,
            161_506_800,
            71_253_000,
            28_501_200,
        ],
        [
            465_519_600,
            389_516_400,
            313_513_200,
            237_510_000,
            128_255_400,
            104_504_400,
            28_501_200,
        ],
        [
            465_519_600,
            389_516_400,
            313_513_200,
            185_257_800,
            180_507_600,
            104_504_400,
            28_501_200,
        ],
        [
            465_519_600,
            389_516_400,
            242_260_200,
            256_510_800,
            180_507_600,
            104_504_400,
            28_501_200,
        ],
        [
            465_519_600,
            299_262_600,
            332_514_000,
            256_510_800,
            180_507_600,
            104_504_400,
            28_501_200,
        ],
        [
            356_265_000,
            408_517_200,
            332_514_000,
            256_510_800,
            180_507_600,
            104_504_400,
            28_501_200,
        ],
        [
            484_520_400,
            408_517_200,
            332_514_000,
            256_510_800,
            180_507_600,
            104_504_400,
            28_501_200,
        ],
    ];
    let mut total = 0;
    for (i, row) in table.iter().enumerate() {
        for (j, &want) in row.iter().enumerate() {
            let name = format!("3212.{}{}", 6 - i, 6 - j);
            assert_eq!(count(&name), want, "{name}");
            total += want;
        }
    }
    // The paper's node total, and its largest 8-piece slices.
    assert_eq!(total, 11_799_496_800);
    assert_eq!(node_count(&"3212".parse().unwrap()), 11_799_496_800);
    assert_eq!(count("2222.66"), 1_142_505_000);
    assert_eq!(count("2222.65"), 957_738_600);
    assert_eq!(count("2222.56"), 957_738_600);
}

#[test]
fn table_1_of_2003_five_v_five_nodes() {
    // 2003 paper, Table 1. Each row is a node together with its mirror (the node computed
    // with Black to move and its mirror for White to move): node + mirror when they differ,
    // the node alone when it is its own mirror. That is why the rows add up to the 5v5 total.
    // Slices are the node's own, counting a self-mirror node's mirror pairs once.
    let mut sum = 0;
    for (node, want, slices) in [
        ("5500", 16_257_084_480u64, 1usize),
        ("5401", 142_249_489_200, 7),
        ("5302", 247_789_432_800, 7),
        ("5203", 214_750_841_760, 7),
        ("5104", 92_565_018_000, 7),
        ("5005", 15_868_288_800, 6),
        ("4411", 311_375_610_000, 28),
        ("4312", 1_085_553_705_600, 49),
        ("4213", 941_518_468_800, 49),
        ("4114", 406_152_630_000, 49),
        ("4015", 69_686_136_000, 42),
        ("3322", 946_853_107_200, 28),
        ("3223", 1_643_753_217_600, 49),
        ("3124", 709_688_460_000, 49),
        ("3025", 121_877_184_000, 42),
        ("2233", 714_003_388_800, 28),
        ("2134", 617_101_500_000, 49),
        ("2035", 106_080_312_960, 42),
        ("1144", 133_467_390_552, 28),
        ("1045", 45_934_129_104, 42),
        ("0055", 3_956_576_472, 21),
    ] {
        let m: Material = node.parse().unwrap();
        let with_mirror = if m == m.mirror() {
            node_count(&m)
        } else {
            node_count(&m) + node_count(&m.mirror())
        };
        assert_eq!(with_mirror, want, "{node}");
        sum += want;
        let all = m.slices();
        let listed = if m == m.mirror() {
            all.iter().filter(|s| **s <= s.mirror()).count()
        } else {
            all.len()
        };
        assert_eq!(listed, slices, "{node} slices");
    }
    assert_eq!(sum, 8_586_481_972_128);
    assert_eq!(split_count(5, 5), sum);
}

#[test]
fn table_2_of_2003_largest_ten_piece_slices() {
    // The 2003 paper numbers ranks 1..7: its 3223.77 is our 3223.66.
    for (a, b, want) in [
        ("3223.66", "2332.66", 85_515_674_400u64),
        ("2233.65", "2233.56", 73_228_209_600),
        ("3223.56", "2332.65", 71_823_866_400),
        ("3223.65", "2332.56", 59_656_240_800),
        ("3322.65", "3322.56", 58_741_300_800),
        ("3223.46", "2332.64", 58_132_058_400),
        ("2134.66", "1243.66", 56_491_266_000),
    ] {
        assert_eq!(count(a), want, "{a}");
        assert_eq!(count(b), want, "{b}");
    }
    assert_eq!(count("2233.66"), 104_558_625_600);
}
