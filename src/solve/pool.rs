//! The memory of a [`PageCache`](super::store::PageCache): its page buffers back to back in
//! one reservation of address space, filled on demand, into which a run of a work file's
//! pages can be mapped in place.
//!
//! Why not a vector and `pread`: on these virtual machines, memory a process touches for the
//! first time is dear (the kernel zeroes every page, and the host backs it anew): a job that
//! read its range and the mirror (180 MB in a 7-piece `mtc` round) spent 62 % of its time in
//! the kernel's `clear_page` and 21 % copying, for a round that looked at 30,000 positions.
//! A run mapped from the file is the kernel's page cache itself: no zeroing, no copy, and a
//! page is copied (privately, never into the file) only when the job writes it.
//!
//! Writes to a mapped page stay in this process until [`PageCache::flush`] writes them with
//! `pwrite`, as for any other buffer (the private mapping keeps the store's rule that the
//! file holds the last checkpoint's state). A page of the run not written here shows what
//! the file holds when it is read, as a `pread` at that moment would.
//!
//! [`PageCache::flush`]: super::store::PageCache::flush

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// `cap` bytes of address space, of which the first `len` are in use (zero until written or
/// mapped from a file).
pub struct PagePool {
    ptr: *mut u8,
    cap: usize,
    len: usize,
}

// SAFETY: the pool owns its mapping alone, like a `Box<[u8]>`; access goes through `&self` or
// `&mut self`.
unsafe impl Send for PagePool {}
// SAFETY: as above: shared references only read.
unsafe impl Sync for PagePool {}

impl PagePool {
    /// Reserves `cap` bytes of address space (no memory is used until a page is touched).
    pub fn new(cap: usize) -> io::Result<PagePool> {
        if cap == 0 {
            return Ok(PagePool {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                cap: 0,
                len: 0,
            });
        }
        // SAFETY: a fresh anonymous mapping at an address the kernel chooses.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                cap,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(PagePool {
            ptr: ptr.cast(),
            cap,
            len: 0,
        })
    }

    /// Bytes in use.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no byte is in use.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Takes `bytes` more into use, zero until written (the pool only grows).
    pub fn grow(&mut self, bytes: usize) {
        assert!(
            self.len + bytes <= self.cap,
            "page pool of {} bytes cannot grow by {bytes} from {}",
            self.cap,
            self.len
        );
        self.len += bytes;
    }

    /// Takes `bytes` more into use, mapped from `file` at `offset` (both multiples of the
    /// system's page size): they show the file's bytes until written, and writes stay here.
    pub fn map_file(&mut self, file: &File, offset: u64, bytes: usize) -> io::Result<()> {
        assert!(
            self.len + bytes <= self.cap,
            "page pool of {} bytes cannot map {bytes} more from {}",
            self.cap,
            self.len
        );
        if bytes == 0 {
            return Ok(());
        }
        let at = self.ptr.wrapping_add(self.len);
        let offset = libc::off_t::try_from(offset)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset past off_t"))?;
        // SAFETY: `at..at + bytes` lies inside this pool's own reservation and is not in use
        // (no reference into it exists), so replacing its pages disturbs nothing else.
        let got = unsafe {
            libc::mmap(
                at.cast(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_FIXED,
                file.as_raw_fd(),
                offset,
            )
        };
        if got == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        debug_assert_eq!(got.cast::<u8>(), at);
        self.len += bytes;
        Ok(())
    }
}

impl std::ops::Deref for PagePool {
    type Target = [u8];

    #[inline(always)]
    fn deref(&self) -> &[u8] {
        // SAFETY: the first `len` bytes are mapped, readable and owned by the pool.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl std::ops::DerefMut for PagePool {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: the first `len` bytes are mapped, writable (privately) and owned by the
        // pool, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for PagePool {
    fn drop(&mut self) {
        if self.cap != 0 {
            // SAFETY: unmaps exactly the reservation made in `new`; no reference outlives
            // the pool.
            unsafe { libc::munmap(self.ptr.cast(), self.cap) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    #[test]
    fn grown_bytes_are_zero_and_writable() {
        let mut p = PagePool::new(1 << 20).unwrap();
        assert!(p.is_empty());
        p.grow(8192);
        assert!(p.iter().all(|&b| b == 0));
        p[8191] = 7;
        p.grow(8192);
        assert_eq!((p[8191], p[8192], p.len()), (7, 0, 16384));
    }

    #[test]
    fn a_mapped_run_reads_the_file_and_keeps_its_writes() {
        let dir = std::env::temp_dir().join(format!("nowdb-pool-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let bytes: Vec<u8> = (0..4 * 8192).map(|i| (i % 251) as u8).collect();
        f.write_all(&bytes).unwrap();
        let mut p = PagePool::new(8 * 8192).unwrap();
        p.grow(8192);
        p.map_file(&f, 8192, 2 * 8192).unwrap();
        assert_eq!(&p[8192..], &bytes[8192..3 * 8192]);
        // A write stays in the pool: the file keeps its bytes.
        p[8192] ^= 0xff;
        let mut back = [0u8; 1];
        f.read_exact_at(&mut back, 8192).unwrap();
        assert_eq!(back[0], bytes[8192]);
        assert_eq!(p[8192], bytes[8192] ^ 0xff);
        // An unwritten page shows the file as it is when read.
        f.write_all_at(&[42], 2 * 8192 + 5).unwrap();
        assert_eq!(p[2 * 8192 + 5], 42);
        p.grow(8192);
        assert_eq!(p[3 * 8192], 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[should_panic(expected = "cannot grow")]
    fn growing_past_the_reservation_panics() {
        let mut p = PagePool::new(8192).unwrap();
        p.grow(16384);
    }
}
