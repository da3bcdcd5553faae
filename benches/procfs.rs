//! `/proc` read by hand (`src/procfs.rs`, `src/watch`) against `sysinfo` for the same facts,
//! per call: a job process's activity (what the hung-job check samples every 2 s per job),
//! the scan of every process's command line (the orphan-job check), memory and CPU counters
//! (wswatch, every few seconds). Run: `cargo bench --bench procfs`.

use std::time::Instant;
use sysinfo::{MemoryRefreshKind, Pid, ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

fn per_call(n: u32, mut f: impl FnMut()) -> f64 {
    f();
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_secs_f64() * 1e6 / n as f64
}

fn main() {
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = child.id();
    let processes = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .count();

    let hand = per_call(20_000, || {
        std::hint::black_box(nowdb::procfs::activity(pid));
    });
    let mut sys = System::new().unwrap();
    let one = [Pid::from_u32(pid)];
    let kind = ProcessRefreshKind::nothing().with_cpu();
    let crate_ = per_call(20_000, || {
        sys.refresh_processes_specifics(ProcessesToUpdate::Some(&one), true, kind);
        let p = sys.process(one[0]).unwrap();
        std::hint::black_box((p.accumulated_cpu_time(), p.status()));
    });
    println!(
        "one process's activity: by hand {hand:.1} us, sysinfo {crate_:.1} us (CPU time and state only; no rchar/wchar)"
    );

    let arg = pid.to_string();
    let hand = per_call(200, || {
        std::hint::black_box(nowdb::procfs::process_with_args(&[arg.as_bytes()]));
    });
    let mut sys = System::new().unwrap();
    let kind = ProcessRefreshKind::nothing().with_cmd(UpdateKind::Always);
    let crate_ = per_call(200, || {
        sys.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
        let found = sys.processes().values().any(|p| {
            p.cmd()
                .iter()
                .any(|a| a.as_encoded_bytes() == arg.as_bytes())
        });
        std::hint::black_box(found);
    });
    println!(
        "scan of {processes} processes' command lines: by hand {hand:.1} us, sysinfo {crate_:.1} us"
    );

    let hand = per_call(20_000, || {
        std::hint::black_box(nowdb::watch::memory_allows_suspend(std::path::Path::new(
            "/proc/meminfo",
        )));
    });
    let mut sys = System::new().unwrap();
    let crate_ = per_call(20_000, || {
        sys.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
        std::hint::black_box(sys.available_memory() * 4 >= sys.total_memory());
    });
    println!("memory (available >= a quarter): by hand {hand:.1} us, sysinfo {crate_:.1} us");

    let hand = per_call(20_000, || {
        std::hint::black_box(nowdb::watch::cpu_counters(std::path::Path::new(
            "/proc/stat",
        )));
    });
    println!(
        "CPU counters without nice time: by hand {hand:.1} us; sysinfo has none (it counts nice \
         time, the runners' own jobs, as busy)"
    );
    let _ = child.kill();
    let _ = child.wait();
}
