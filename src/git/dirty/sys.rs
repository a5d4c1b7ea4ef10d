//! The system calls the dirty check needs and std does not offer: `lstat`
//! relative to an open directory (`fstatat`), with the metadata fields git
//! compares read off the result, and the filesystem's type (`fstatfs`).
//!
//! Why `fstatat` on the worktree's directory instead of `lstat` of an
//! absolute path: the kernel then resolves only the path inside the
//! repository, not the directories above it, for each of tens of
//! thousands of files. Measured on 50,000 files, 2 threads: 34 ms against
//! 44 ms for absolute paths.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// An open directory that paths are looked up from.
pub(super) struct Root(File);

/// What `lstat` says about a path, in the terms git compares.
#[derive(Debug, Clone, Copy)]
pub(super) struct Meta {
    pub mode: u32,
    pub size: u64,
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
    pub dev: u64,
    pub ino: u64,
    pub uid: u32,
    pub gid: u32,
}

impl Meta {
    // The `libc` types differ between platforms (u16 modes on macOS).
    #[allow(clippy::useless_conversion)]
    fn file_type(&self) -> u32 {
        self.mode & u32::from(libc::S_IFMT)
    }
    #[allow(clippy::useless_conversion)]
    pub fn is_dir(&self) -> bool {
        self.file_type() == u32::from(libc::S_IFDIR)
    }
    #[allow(clippy::useless_conversion)]
    pub fn is_file(&self) -> bool {
        self.file_type() == u32::from(libc::S_IFREG)
    }
    #[allow(clippy::useless_conversion)]
    pub fn is_symlink(&self) -> bool {
        self.file_type() == u32::from(libc::S_IFLNK)
    }
    /// Git's test: a regular file with the owner's execute bit.
    #[allow(clippy::useless_conversion)]
    pub fn is_executable(&self) -> bool {
        self.is_file() && self.mode & u32::from(libc::S_IXUSR) != 0
    }
}

impl Root {
    pub fn open(dir: &Path) -> io::Result<Root> {
        use std::os::unix::fs::OpenOptionsExt as _;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(dir)
            .map(Root)
    }

    /// `lstat` of `rela` (relative to this directory; "." for itself).
    // The `libc` field types differ between platforms.
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    pub fn lstat(&self, rela: &CStr) -> io::Result<Meta> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `rela` is NUL-terminated, `st` is a valid buffer for one
        // `struct stat`, and the descriptor stays open while `self` lives.
        let rc = unsafe {
            libc::fstatat(
                self.0.as_raw_fd(),
                rela.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatat returned 0, so it filled the whole struct.
        let st = unsafe { st.assume_init() };
        Ok(Meta {
            mode: u32::from(st.st_mode),
            size: st.st_size as u64,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as u32),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as u32),
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            uid: st.st_uid,
            gid: st.st_gid,
        })
    }
}

impl Root {
    /// Whether this directory is on a network or user-space filesystem,
    /// where directory mtimes may come from another machine's clock or an
    /// attribute cache (NFS, SMB/CIFS, FUSE, 9p, VirtualBox shares): the
    /// listing cache is not trusted there.
    #[cfg(target_os = "linux")]
    pub fn on_remote_filesystem(&self) -> bool {
        const REMOTE: [u64; 7] = [
            0x6969,      // NFS
            0x517B,      // SMB
            0xFF53_4D42, // CIFS
            0xFE53_4D42, // SMB2
            0x6573_5546, // FUSE
            0x0102_1997, // 9p
            0x786F_4256, // vboxsf
        ];
        let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
        // SAFETY: `st` is a valid buffer for one `struct statfs` and the
        // descriptor stays open while `self` lives.
        let rc = unsafe { libc::fstatfs(self.0.as_raw_fd(), st.as_mut_ptr()) };
        if rc != 0 {
            // Unknown: do not trust the cache.
            return true;
        }
        // SAFETY: fstatfs returned 0, so it filled the whole struct.
        let st = unsafe { st.assume_init() };
        #[allow(clippy::unnecessary_cast)]
        REMOTE.contains(&(st.f_type as u64))
    }

    /// Elsewhere the filesystem's type is not read: the cache is used.
    #[cfg(not(target_os = "linux"))]
    pub fn on_remote_filesystem(&self) -> bool {
        false
    }
}

/// Whether an `lstat` error means there is nothing there: gone, a leading
/// component that is not a directory (any more), or a symbolic link loop.
pub(super) fn is_gone(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
    )
}

/// A NUL-terminated copy of `path` in `buf`, for the calls above; `None`
/// for a path with a NUL inside (which no file can have).
pub(super) fn c_path<'b>(buf: &'b mut Vec<u8>, path: &[u8]) -> Option<&'b CStr> {
    buf.clear();
    if path.is_empty() {
        buf.push(b'.');
    } else {
        buf.extend_from_slice(path);
    }
    buf.push(0);
    CStr::from_bytes_with_nul(buf).ok()
}
