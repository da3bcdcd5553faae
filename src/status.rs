//! `dbstatus` reports. For now: the plan of slices to compute.

use crate::slice::plan;
use std::io::{self, Write};

/// Prints the computation plan for 2..=`pieces` pieces: one line per slice pair with its
/// wave (pairs of one wave can run side by side), positions, and dependencies.
pub fn write_plan(pieces: u32, json: bool, out: &mut dyn Write) -> io::Result<()> {
    let p = plan(pieces);
    if json {
        let waves: Vec<String> = p
            .waves
            .iter()
            .map(|w| {
                let names: Vec<String> = w.iter().map(|x| format!("\"{x}\"")).collect();
                format!("[{}]", names.join(","))
            })
            .collect();
        return writeln!(
            out,
            "{{\"pieces\":{pieces},\"waves\":[{}]}}",
            waves.join(",")
        );
    }
    writeln!(out, "wave\tpair\tpositions\tdepends_on")?;
    for (w, pairs) in p.waves.iter().enumerate() {
        for pair in pairs {
            let deps: Vec<String> = pair.dependencies().iter().map(|d| d.to_string()).collect();
            writeln!(out, "{w}\t{pair}\t{}\t{}", pair.count(), deps.join(","))?;
        }
    }
    let pairs = p.pairs().count();
    let positions: u64 = p.pairs().map(|x| x.count()).sum();
    writeln!(
        out,
        "# {pairs} slice pairs, {positions} positions, {} waves",
        p.waves.len()
    )
}
