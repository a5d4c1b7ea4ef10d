//! Runs a command on a pseudo-terminal, for the tests of what git-clada does
//! only on a terminal (progress lines, colour).
//!
//! The child gets the terminal as its standard input, output and error and as
//! its controlling terminal, the way a shell would start it; everything it
//! writes is read back as one text. The terminal turns `\n` into `\r\n`; the
//! text has them turned back so that tests can compare lines.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};

/// What a command run on a terminal did.
pub struct PtyOutput {
    pub status: ExitStatus,
    /// Standard output and error as the terminal showed them, interleaved.
    pub text: String,
}

/// Runs `cmd` on a new 100×24 terminal and waits for it to end.
///
/// Panics (failing the test) when no terminal can be opened.
pub fn run(mut cmd: Command) -> PtyOutput {
    let (master, slave) = open();
    let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("duplicate the terminal"));
    cmd.stdin(stdio(&slave))
        .stdout(stdio(&slave))
        .stderr(stdio(&slave));
    // SAFETY: setsid and ioctl are async-signal-safe; they make the terminal
    // the child's controlling terminal, as a shell's job control would.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("start the command on a terminal");
    // Only the child may hold the terminal's other end now: once it exits,
    // reading the master end ends (with EIO) instead of waiting forever.
    drop(cmd);
    drop(slave);
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(master);
        let mut bytes = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => bytes.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // EIO: every copy of the other end is closed.
                Err(_) => break,
            }
        }
        bytes
    });
    let status = child.wait().expect("wait for the command");
    let bytes = reader.join().expect("read the terminal");
    PtyOutput {
        status,
        text: String::from_utf8_lossy(&bytes).replace("\r\n", "\n"),
    }
}

fn open() -> (OwnedFd, OwnedFd) {
    let mut master = -1;
    let mut slave = -1;
    let size = libc::winsize {
        ws_row: 24,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors into the given places; the
    // name, attribute and size pointers may be null or point to valid data.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty succeeded, so both are open descriptors we own.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    assert!(master.as_raw_fd() >= 0 && slave.as_raw_fd() >= 0);
    (master, slave)
}

#[test]
fn a_command_sees_a_terminal_and_its_output_is_read_back() {
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "test -t 0 && test -t 1 && test -t 2 && echo on a terminal; echo err >&2",
    ]);
    let out = run(cmd);
    assert!(out.status.success());
    assert_eq!(out.text, "on a terminal\nerr\n");
}
