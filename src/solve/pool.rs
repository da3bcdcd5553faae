//! The memory of a [`PageCache`](super::store::PageCache) and of a finished slice: page
//! buffers back to back in one reservation of address space, filled on demand, into which a
//! range of a file is mapped or read.
//!
//! A range of a file comes in one of two ways ([`Load`]). On these virtual machines, memory a
//! process touches for the first time is dear (the kernel zeroes every page, and the host
//! backs it anew): a short `mtc` round that read its range and the mirror (180 MB at 7
//! pieces) into fresh memory spent 62 % of its time in the kernel's `clear_page` and 21 %
//! copying, to look at 30,000 positions. Mapped from the file, the range is the kernel's
//! page cache itself: no zeroing, no copy. But a mapping has small pages, and a job that
//! reads a range at random millions of times (`ver`, `mtcver`, a scan) then misses the TLB
//! on most reads: it is faster with the range read into huge pages, whatever they cost to
//! fill (the 7-piece part's `mtcver` took 1.08 times as long mapped).
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
use std::os::unix::fs::FileExt;

/// `cap` bytes of address space, of which the first `len` are in use (zero until written or
/// mapped from a file).
pub struct PagePool {
    /// The reservation (`reserved` bytes from `base`) and its first 2 MiB boundary.
    base: *mut u8,
    reserved: usize,
    ptr: *mut u8,
    cap: usize,
    len: usize,
}

/// How a range of a file comes into a [`PagePool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// Mapped: the page cache's own pages, neither zeroed nor copied, in small pages. For
    /// a job that reads a small part of the range.
    Map,
    /// Read into fresh memory advised huge: dear to fill, cheap to read at random. For a
    /// job that reads the range through, or at random many times over.
    Read,
}

/// Transparent huge pages are 2 MiB on x86-64.
const HUGE: usize = 2 << 20;

// SAFETY: the pool owns its mapping alone, like a `Box<[u8]>`; access goes through `&self` or
// `&mut self`.
unsafe impl Send for PagePool {}
// SAFETY: as above: shared references only read.
unsafe impl Sync for PagePool {}

impl PagePool {
    /// Reserves `cap` bytes of address space (no memory is used until a page is touched).
    pub fn new(cap: usize) -> io::Result<PagePool> {
        if cap == 0 {
            let dangling = std::ptr::NonNull::dangling().as_ptr();
            return Ok(PagePool {
                base: dangling,
                reserved: 0,
                ptr: dangling,
                cap: 0,
                len: 0,
            });
        }
        // One huge page more than asked, so that the pool can start on a huge page's
        // boundary (only whole aligned huge pages are backed so).
        let reserved = cap + HUGE;
        // SAFETY: a fresh anonymous mapping at an address the kernel chooses.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                reserved,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base: *mut u8 = base.cast();
        let ptr = base.wrapping_add((base as usize).next_multiple_of(HUGE) - base as usize);
        Ok(PagePool {
            base,
            reserved,
            ptr,
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

    /// Takes `bytes` more into use, holding `file`'s from `offset` (both multiples of the
    /// system's page size) brought in as `how` says; writes to them stay here.
    pub fn load(&mut self, file: &File, offset: u64, bytes: usize, how: Load) -> io::Result<()> {
        match how {
            Load::Map => self.map_file(file, offset, bytes),
            Load::Read => {
                let at = self.len;
                self.grow(bytes);
                crate::mem::advise_huge_span(self.ptr as usize + at, bytes);
                file.read_exact_at(&mut self[at..], offset)
            }
        }
    }

    /// Takes `bytes` more into use, mapped from `file` at `offset` (both multiples of the
    /// system's page size): they show the file's bytes until written, and writes stay here.
    fn map_file(&mut self, file: &File, offset: u64, bytes: usize) -> io::Result<()> {
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
        if self.reserved != 0 {
            // SAFETY: unmaps exactly the reservation made in `new`; no reference outlives
            // the pool.
            unsafe { libc::munmap(self.base.cast(), self.reserved) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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

    /// A file of four 8 KiB pages of known bytes, and its bytes.
    fn four_pages(name: &str) -> (std::path::PathBuf, std::fs::File, Vec<u8>) {
        let dir = std::env::temp_dir().join(format!("nowdb-pool-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.join("f"))
            .unwrap();
        let bytes: Vec<u8> = (0..4 * 8192).map(|i| (i % 251) as u8).collect();
        f.write_all(&bytes).unwrap();
        (dir, f, bytes)
    }

    #[test]
    fn a_mapped_range_reads_the_file_and_keeps_its_writes() {
        let (dir, f, bytes) = four_pages("map");
        let mut p = PagePool::new(8 * 8192).unwrap();
        p.grow(8192);
        p.load(&f, 8192, 2 * 8192, Load::Map).unwrap();
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
    fn a_read_range_is_a_copy() {
        let (dir, f, bytes) = four_pages("read");
        let mut p = PagePool::new(3 << 20).unwrap();
        p.load(&f, 0, 4 * 8192, Load::Read).unwrap();
        assert_eq!(&p[..], &bytes[..]);
        p[0] ^= 0xff;
        f.write_all_at(&[42], 5).unwrap();
        let mut back = [0u8; 1];
        f.read_exact_at(&mut back, 0).unwrap();
        assert_eq!((back[0], p[0], p[5]), (bytes[0], bytes[0] ^ 0xff, bytes[5]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[should_panic(expected = "cannot grow")]
    fn growing_past_the_reservation_panics() {
        let mut p = PagePool::new(8192).unwrap();
        p.grow(16384);
    }
}
