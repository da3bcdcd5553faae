//! Memory the solver and the probes read at random: asked to be backed by transparent huge
//! pages. A random read among tens of megabytes in 4 KiB pages is a TLB miss and a page-table
//! walk on top of the cache miss; in 2 MiB pages the walk is mostly gone. Linux's default
//! (`madvise` mode) gives huge pages only to memory that asks for them.

/// Asks Linux to back `v`'s allocation (its capacity, not only its length) with transparent
/// huge pages, in the 2 MiB-aligned part of it. A hint only: nothing changes in what the
/// memory holds. Call it before the memory is first written, since pages already touched
/// stay small until the kernel's background collapse.
pub fn advise_huge_pages<T>(v: &Vec<T>) {
    advise_huge_span(v.as_ptr() as usize, v.capacity() * std::mem::size_of::<T>());
}

/// [`advise_huge_pages`] for the `bytes` bytes from address `start`, which must lie within
/// one mapping or allocation of the caller's (a vector's capacity, a reserved pool).
pub fn advise_huge_span(start: usize, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        // Only whole aligned huge pages can be backed so: advising less would cost a system
        // call, and split the heap's mapping, for nothing (most vectors are small).
        const HUGE: usize = 2 << 20;
        let (from, to) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
        if to > from {
            // SAFETY: the range lies within the caller's memory (above), and the advice
            // changes only how the kernel backs it, never what it holds.
            unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The mapping holding `addr`, as /proc/self/smaps describes it.
    fn smaps_entry(addr: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut entry = String::new();
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = head.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&addr);
            }
            if inside {
                entry.push_str(line);
                entry.push('\n');
            }
        }
        entry
    }

    #[test]
    fn a_large_vector_is_advised_huge_and_keeps_its_bytes() {
        // A zeroed allocation this large maps fresh pages without writing them.
        let v = vec![0u8; 16 << 20];
        advise_huge_pages(&v);
        assert!(v.iter().all(|&b| b == 0));
        let entry = smaps_entry(v.as_ptr() as usize + (8 << 20));
        let flags = entry
            .lines()
            .find_map(|l| l.strip_prefix("VmFlags:"))
            .unwrap_or_else(|| panic!("no VmFlags for the vector's mapping:\n{entry}"));
        assert!(
            flags.split_whitespace().any(|f| f == "hg"),
            "the mapping is not advised huge: {flags}"
        );
    }
}
