//! Adding a value to the repository's own configuration file
//! (`<common dir>/config`), as `git config --add` does: under git's lock
//! file (`config.lock`, created exclusively, renamed over the file), so a
//! concurrent `git config` waits or fails rather than losing either
//! change. gix's configuration file type does the parsing and writing;
//! comments, order and formatting of everything else are kept.

use gix::bstr::ByteSlice as _;

use super::{GitError, Repository};

impl Repository {
    /// Adds `value` to `section.key` in the repository's config file
    /// unless the key already holds it (a multi-valued key such as
    /// `receive.hideRefs` keeps its other values). Returns whether it was
    /// added.
    pub fn add_config_value(
        &self,
        section: &str,
        key: &str,
        value: &str,
    ) -> Result<bool, GitError> {
        let path = self.common_dir().join("config");
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            GitError::op(format!("{what} {}", path.display()), e)
        };
        let mut file =
            gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
                .map_err(|e| fail("read", &e))?;
        let held = file
            .raw_values_by(section, None, key)
            .unwrap_or_default()
            .iter()
            .any(|v| v.as_bstr() == value.as_bytes().as_bstr());
        if held {
            return Ok(false);
        }
        file.section_mut_or_create_new(section, None)
            .map_err(|e| fail("edit", &e))?
            .push(key, Some(value.as_bytes().as_bstr()))
            .map_err(|e| fail("edit", &e))?;
        let mut bytes = Vec::new();
        file.write_to(&mut bytes).map_err(|e| fail("write", &e))?;
        let lock = path.with_file_name("config.lock");
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
            .and_then(|mut f| {
                std::io::Write::write_all(&mut f, &bytes)?;
                f.sync_all()
            });
        if let Err(e) = written {
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                let _ = std::fs::remove_file(&lock);
            }
            return Err(fail("lock", &e));
        }
        std::fs::rename(&lock, &path).map_err(|e| {
            let _ = std::fs::remove_file(&lock);
            fail("replace", &e)
        })?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_git::command;
    use super::Repository;

    #[test]
    fn a_value_is_added_once_beside_the_others_and_git_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = command(dir.path(), args).output().unwrap();
            assert!(out.status.success(), "{args:?}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        git(&["init", "-q", "--bare", "-b", "main"]);
        git(&["config", "--add", "receive.hideRefs", "refs/pull"]);
        let repo = Repository::open(dir.path()).unwrap();
        assert!(
            repo.add_config_value("receive", "hideRefs", "refs/clada/results")
                .unwrap()
        );
        assert!(
            !repo
                .add_config_value("receive", "hideRefs", "refs/clada/results")
                .unwrap()
        );
        assert_eq!(
            git(&["config", "--get-all", "receive.hideRefs"]),
            "refs/pull\nrefs/clada/results\n"
        );
        assert!(!dir.path().join("config.lock").exists());
    }
}
