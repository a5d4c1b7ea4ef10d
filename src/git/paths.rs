//! Git's own rules about names in a tree, as gix applies them
//! (`gix::validate::path::component` with core.protectHFS and
//! core.protectNTFS): names that some filesystem folds into `.git`
//! (`.g\u{200c}it`, `.GI\u{feff}T`, `.git.`, `.git `, `GIT~1`,
//! `.git::$INDEX_ALLOCATION`) are refused everywhere, as git refuses them
//! in every checkout. Windows device names and characters are not: git
//! refuses those only on Windows.

use gix::bstr::ByteSlice as _;
use gix::validate::path::component;

/// Why git refuses `name` as a path component, if it does.
pub fn refused_name(name: &str) -> Option<String> {
    let options = component::Options {
        protect_windows: false,
        protect_hfs: true,
        protect_ntfs: true,
    };
    component(name.as_bytes().as_bstr(), None, options)
        .err()
        .map(|e| match e {
            component::Error::DotGitDir => {
                "some filesystem reads it as .git, which a reply can never write".to_string()
            }
            other => other.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::refused_name;

    #[test]
    fn names_a_filesystem_folds_into_dot_git_are_refused() {
        for name in [
            ".git",
            ".g\u{200c}it",
            ".GI\u{feff}T",
            ".git.",
            ".git ",
            "GIT~1",
            ".git::$INDEX_ALLOCATION",
            "git~1",
        ] {
            assert!(refused_name(name).is_some(), "{name:?}");
        }
        for name in [
            ".gitignore",
            "git",
            ".github",
            "aux.txt",
            "a:b",
            "x~1",
            "GIT~2",
        ] {
            assert_eq!(refused_name(name), None, "{name:?}");
        }
    }
}
