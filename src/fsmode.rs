//! The executable bit on disk, the one file mode git records.

use std::path::Path;

/// Whether any execute bit is set.
#[cfg(unix)]
pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
pub fn is_executable(_: &std::fs::Metadata) -> bool {
    false
}

/// Sets or clears the execute bits, mirroring the read bits as git does.
#[cfg(unix)]
pub fn set_executable(path: &Path, executable: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path)?.permissions();
    let mode = perms.mode();
    let wanted = if executable {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    };
    if wanted != mode {
        perms.set_mode(wanted);
        std::fs::set_permissions(path, perms)?;
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn set_executable(_: &Path, _: bool) -> std::io::Result<()> {
    Ok(())
}
