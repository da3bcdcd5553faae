"""Tests of the nowdb Python module against a finished database of 2..5 pieces.

NOWDB_TEST_DB names the database (a site's db/ directory, e.g. from
`target/release/jobrunner build-local --site /tmp/py5 --pieces 5`), NOWDB_DBPROBE the
dbprobe binary to compare with (default: the checkout's target/release/dbprobe). Without
NOWDB_TEST_DB the tests that need a database fail: a test that skips proves nothing.
"""

import inspect
import json
import os
import pathlib
import random
import shutil
import subprocess
import threading

import pytest

import nowdb

REPO = pathlib.Path(__file__).resolve().parents[2]
SEED = 20260433
MOST_PIECES = 5
NO_DATABASE = (
    "NOWDB_TEST_DB is not set: set it to a finished nowdb database of 2..5 pieces "
    "(a site's db/ directory, e.g. after `target/release/jobrunner build-local "
    "--site /tmp/py5 --pieces 5`, NOWDB_TEST_DB=/tmp/py5/db)"
)


@pytest.fixture(scope="session")
def db_dir():
    value = os.environ.get("NOWDB_TEST_DB")
    if not value:
        pytest.fail(NO_DATABASE, pytrace=False)
    path = pathlib.Path(value)
    if not (path / "VERSION").is_file():
        pytest.fail(f"NOWDB_TEST_DB={value} is not a nowdb database (no VERSION file)", pytrace=False)
    return path


@pytest.fixture(scope="session")
def dbprobe():
    value = os.environ.get("NOWDB_DBPROBE")
    path = pathlib.Path(value) if value else REPO / "target" / "release" / "dbprobe"
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"dbprobe not found at {path}: build it (cargo build --release) or set NOWDB_DBPROBE",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def db(db_dir):
    with nowdb.open(db_dir) as database:
        yield database


def random_fen(rng, pieces):
    """A random legal-looking FEN of `pieces` pieces: both colours present, no man on its
    crowning row (Black men never on 29..32, White men never on 1..4)."""
    while True:
        colours = [rng.choice("BW") for _ in range(pieces)]
        if "B" in colours and "W" in colours:
            break
    squares = rng.sample(range(1, 33), pieces)
    lists = {"B": [], "W": []}
    for colour, square in zip(colours, squares):
        crowning = square >= 29 if colour == "B" else square <= 4
        king = crowning or rng.random() < 0.4
        lists[colour].append(f"K{square}" if king else str(square))
    to_move = rng.choice("BW")
    return f"{to_move}:W{','.join(lists['W'])}:B{','.join(lists['B'])}"


def random_fens(count, seed=SEED):
    rng = random.Random(seed)
    return [random_fen(rng, rng.randint(2, MOST_PIECES)) for _ in range(count)]


def dbprobe_batch(dbprobe, db_dir, fens):
    """dbprobe's values of `fens` (`--batch`: one FEN a line in, `FEN<TAB>value` out)."""
    run = subprocess.run(
        [str(dbprobe), "--site", str(db_dir.parent), "--batch"],
        input="".join(f + "\n" for f in fens),
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [line.split("\t") for line in run.stdout.splitlines()]
    assert [fen for fen, _ in lines] == fens, run.stderr
    return [value for _, value in lines]


OPPOSITE = {"win": "loss", "loss": "win", "draw": "draw"}


def test_database_is_given():
    """Fails (where the fixtures only error) when NOWDB_TEST_DB is unset, and checks that
    the database holds 2..5 pieces, as the tests below assume."""
    value = os.environ.get("NOWDB_TEST_DB")
    assert value, NO_DATABASE
    # A slice is named by its counts (hex digits) of kings and men, e.g. 0121.13.
    pieces = {sum(int(c, 16) for c in p.name[:4]) for p in pathlib.Path(value).glob("*.ndb")}
    assert pieces == set(range(2, MOST_PIECES + 1)), f"{value} holds {sorted(pieces)} pieces"


# (a) agreement with dbprobe


def test_probe_agrees_with_dbprobe(db, db_dir, dbprobe):
    fens = random_fens(2000)
    expected = dbprobe_batch(dbprobe, db_dir, fens)
    got = [db.probe(f) for f in fens]
    mismatches = [(f, g, e) for f, g, e in zip(fens, got, expected) if g != e]
    assert not mismatches, f"{len(mismatches)} of {len(fens)} differ, e.g. {mismatches[:5]}"
    # The sample is not degenerate: every value occurs.
    assert set(got) == {"win", "loss", "draw"}


def test_random_fens_cover_every_piece_count():
    fens = random_fens(2000)
    pieces = {sum(len(side[1:].split(",")) for side in f.split(":")[1:]) for f in fens}
    assert pieces == set(range(2, MOST_PIECES + 1))


def test_known_positions(db):
    assert db.probe("B:W8,11:B4") == "loss"  # Black's one man is blocked: no move
    assert db.probe("W:W21:B1") == "win"
    assert db.probe("B:W21:B1") == "draw"
    assert db.probe("[FEN \"B:W18,K12:B3,5\"]") == db.probe("B:W18,K12:B3,5")


# (b) probe_many


def test_probe_many_equals_probe(db):
    fens = random_fens(500, seed=SEED + 1)
    assert db.probe_many(fens) == [db.probe(f) for f in fens]
    assert db.probe_many([]) == []
    assert db.probe_many(f for f in fens[:50]) == [db.probe(f) for f in fens[:50]]
    assert db.probe_many(tuple(fens[:3])) == [db.probe(f) for f in fens[:3]]


def test_probe_many_refuses_one_string(db):
    with pytest.raises(TypeError, match="iterable of FEN"):
        db.probe_many("B:W21:B1")


def test_probe_many_bad_fen_names_it(db):
    with pytest.raises(ValueError, match="B:W21:B1,x"):
        db.probe_many(["W:W21:B1", "B:W21:B1,x"])


# (c) moves


def test_moves_agree_with_position_values(db):
    fens = random_fens(400, seed=SEED + 2) + ["B:W8,11:B4"]
    no_move = 0
    for fen in fens:
        value = db.probe(fen)
        moves = db.moves(fen)
        values = [v for _, _, v in moves]
        assert (value == "win") == ("win" in values), (fen, value, moves)
        assert (value == "loss") == all(v == "loss" for v in values), (fen, value, moves)
        if not moves:
            no_move += 1
            assert value == "loss"
        for move, after, v in moves:
            assert db.probe(after) == OPPOSITE[v], (fen, move, after, v)
            assert after[0] != fen[0], "the opponent moves after a move"
    assert no_move >= 1


def test_moves_agree_with_dbprobe(db, db_dir, dbprobe):
    """The move texts and FENs are dbprobe's (without --site it lists each move's FEN)."""
    for fen in random_fens(40, seed=SEED + 3) + ["B:W18,K12:B3,5"]:
        out = subprocess.run(
            [str(dbprobe), fen], capture_output=True, text=True, check=True
        ).stdout
        listed = [line.split("\t") for line in out.splitlines() if line.startswith("move\t")]
        expected = [(move, after) for _, move, _, after in listed]
        assert [(m, a) for m, a, _ in db.moves(fen)] == expected, fen


def test_moves_example(db):
    moves = db.moves("B:W18,K12:B3,5")
    assert ("5-9", "W:W18,K12:B3,9", "draw") in moves
    assert all(isinstance(m, tuple) and len(m) == 3 for m in moves)


# (d) moves to conversion (the test database is built with --mtc)


def is_conversion(fen, move):
    """A capture, or a move of a man: the side to move's piece on the move's first square
    is listed without a K."""
    if "x" in move:
        return True
    start = move.split("-")[0]
    for part in fen.split(":")[1:]:
        if part[0] == fen[0]:
            return start in part[1:].split(",")
    raise AssertionError(f"{fen} lists no pieces of the side to move")


def test_mtc_known_positions(db):
    assert db.mtc("B:WK29:BK4") == 11  # the longest of 2 pieces (docs/PERFORMANCE.md)
    assert db.mtc("B:W21,K13,K24:BK7,K18") == 60  # the longest of 5
    assert db.mtc("B:W21:B1") is None  # a draw
    assert db.mtc("B:W8,11:B4") == 0  # no legal move: lost at once


def test_mtc_agrees_with_its_moves(db):
    """A won position's distance is the fewest over its winning moves of 1 (a conversion)
    or 1 + the distance after it, a lost one's the most over all its moves."""
    checked = 0
    for fen in random_fens(300, seed=SEED + 5):
        value, plies = db.probe(fen), db.mtc(fen)
        if value == "draw":
            assert plies is None, fen
            continue
        moves = db.moves(fen)
        steps = [
            1 if is_conversion(fen, move) else 1 + db.mtc(after)
            for move, after, v in moves
            if value == "loss" or v == "win"
        ]
        expected = 0 if not moves else min(steps) if value == "win" else max(steps)
        assert plies == expected, (fen, value, plies, moves)
        checked += 1
    assert checked >= 100


def test_mtc_agrees_with_dbprobe(db, db_dir, dbprobe):
    for fen in random_fens(30, seed=SEED + 6):
        out = subprocess.run(
            [str(dbprobe), "--site", str(db_dir.parent), "--mtc", fen, "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert db.mtc(fen) == json.loads(out)["plies"], fen


def test_mtc_without_distances_is_unavailable(db_dir, tmp_path):
    copy = tmp_path / "db"
    shutil.copytree(db_dir, copy, ignore=shutil.ignore_patterns("mtc"))
    with nowdb.open(copy) as db:
        assert db.probe("B:WK29:BK4") == "win"
        with pytest.raises(nowdb.UnavailableError, match=r"no moves to conversion.*--mtc"):
            db.mtc("B:WK29:BK4")
        assert db.mtc("B:W21:B1") is None  # a draw needs no distance


# (e) errors


def test_bad_fen_is_value_error_naming_it(db):
    with pytest.raises(ValueError) as e:
        db.probe("B:W18,K12:B3,99")
    assert "B:W18,K12:B3,99" in str(e.value)
    assert "99" in str(e.value).split(":", 1)[-1]
    with pytest.raises(ValueError, match="X:W1:B2"):
        db.moves("X:W1:B2")


def test_missing_directory_is_os_error_naming_it(tmp_path):
    missing = tmp_path / "no-such-db"
    with pytest.raises(FileNotFoundError) as e:
        nowdb.open(missing)
    assert isinstance(e.value, OSError)
    assert str(missing) in str(e.value)
    with pytest.raises(FileNotFoundError, match="not a nowdb database"):
        nowdb.Database(str(tmp_path))


def test_other_version_is_database_error(tmp_path):
    (tmp_path / "VERSION").write_text("nowdb database 999\n")
    with pytest.raises(nowdb.DatabaseError, match="VERSION"):
        nowdb.open(tmp_path)


def test_too_many_pieces_is_unavailable(db):
    fen = "B:W18,22,25,K12:B3,5,9"
    assert sum(len(s[1:].split(",")) for s in fen.split(":")[1:]) == 7
    with pytest.raises(nowdb.UnavailableError, match="7 pieces") as e:
        db.probe(fen)
    assert isinstance(e.value, LookupError)
    with pytest.raises(nowdb.UnavailableError):
        db.probe_many(["W:W21:B1", fen])
    with pytest.raises(nowdb.UnavailableError):
        db.moves(fen)


def test_missing_slice_is_unavailable(db_dir, tmp_path):
    copy = tmp_path / "db"
    shutil.copytree(db_dir, copy)
    fen = "B:W18,K12:B3,5"  # quiet, in slice 0121.13
    (copy / "0121.13.ndb").unlink()
    with nowdb.open(copy) as db:
        with pytest.raises(nowdb.UnavailableError, match="0121.13"):
            db.probe(fen)


def test_damaged_file_is_database_error(db_dir, tmp_path):
    copy = tmp_path / "db"
    shutil.copytree(db_dir, copy)
    for path in copy.glob("*.ndb"):
        with open(path, "r+b") as f:
            f.write(b"\0" * 8)  # the magic
    with nowdb.open(copy) as db:
        with pytest.raises(nowdb.DatabaseError, match=r"\.ndb.*magic") as e:
            db.probe("B:W18,K12:B3,5")
    assert isinstance(e.value, OSError)


def test_exception_classes():
    assert issubclass(nowdb.UnavailableError, LookupError)
    assert issubclass(nowdb.DatabaseError, OSError)
    assert nowdb.UnavailableError.__module__ == "nowdb"


# (f) the package: type hints, docstrings, the object's surface


def test_type_hints_are_installed():
    package = pathlib.Path(nowdb.__file__).parent
    assert (package / "_nowdb.pyi").is_file()
    assert (package / "py.typed").is_file()
    stub = (package / "_nowdb.pyi").read_text()
    for name in ["class Database", "def probe(", "def probe_many(", "def moves(", "def mtc(", "def open("]:
        assert name in stub


def test_docstrings():
    for obj in [
        nowdb,
        nowdb.open,
        nowdb.Database,
        nowdb.Database.probe,
        nowdb.Database.probe_many,
        nowdb.Database.moves,
        nowdb.Database.mtc,
        nowdb.Database.close,
        nowdb.UnavailableError,
        nowdb.DatabaseError,
    ]:
        assert inspect.getdoc(obj), obj
    assert str(inspect.signature(nowdb.open)) == "(directory, cache_mb=64)"
    assert "fen" in inspect.signature(nowdb.Database.probe).parameters


def test_database_object(db_dir):
    db = nowdb.Database(db_dir, cache_mb=1)
    assert db.directory == db_dir
    assert isinstance(db.directory, pathlib.Path)
    assert repr(db) == f"nowdb.Database({str(db_dir)!r}, cache_mb=1)"
    assert not db.closed
    with db as same:
        assert same is db
        assert db.probe("W:W21:B1") == "win"
    assert db.closed
    assert "closed" in repr(db)
    with pytest.raises(ValueError, match="closed"):
        db.probe("W:W21:B1")
    db.close()  # twice is fine


# (g) threads


def test_threads_probe_in_parallel(db):
    fens = random_fens(4000, seed=SEED + 4)
    expected = db.probe_many(fens)
    chunks = [fens[k::8] for k in range(8)]
    results = [None] * 8
    errors = []
    start = threading.Barrier(8)

    def work(k):
        try:
            start.wait()
            results[k] = db.probe_many(chunks[k])
        except BaseException as e:  # reported below: a thread's exception is lost otherwise
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(8):
        assert results[k] == expected[k::8]
