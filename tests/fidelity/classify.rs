//! The verdict on one apply: the work tree (every file but `.git`) and,
//! for clada, HEAD's tree, against the commit's `after/`.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What a file system entry is, as git sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    File { exec: bool, bytes: Vec<u8> },
    Link(Vec<u8>),
}

impl Node {
    fn mode(&self) -> &'static str {
        match self {
            Node::File { exec: true, .. } => "100755",
            Node::File { .. } => "100644",
            Node::Link(_) => "120000",
        }
    }

    fn blob_id(&self) -> String {
        use sha1::{Digest, Sha1};
        let data = match self {
            Node::File { bytes, .. } => bytes,
            Node::Link(t) => t,
        };
        let mut h = Sha1::new();
        h.update(format!("blob {}\0", data.len()).as_bytes());
        h.update(data);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

pub type Tree = BTreeMap<String, Node>;

/// Every file and link under `root` (directories are not compared: git
/// keeps none), `.git` at the top left out.
pub fn read_tree(root: &Path) -> Tree {
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Tree) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if dir == root && e.file_name() == ".git" {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .expect("below the root")
            .to_string_lossy()
            .into_owned();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).unwrap_or_default();
            out.insert(
                rel,
                Node::Link(target.into_os_string().into_encoded_bytes()),
            );
        } else if meta.is_dir() {
            walk(root, &path, out);
        } else {
            let bytes = std::fs::read(&path).unwrap_or_default();
            let exec = meta.permissions().mode() & 0o100 != 0;
            out.insert(rel, Node::File { exec, bytes });
        }
    }
}

/// The differences between the expected and the actual work tree, and a
/// short unified diff of the files whose content differs.
pub fn compare(want: &Tree, got: &Tree) -> (Vec<String>, String) {
    let mut problems = Vec::new();
    let mut diff = String::new();
    for (path, w) in want {
        match got.get(path) {
            None => problems.push(format!("{path}: missing")),
            Some(g) if g == w => {}
            Some(g) => {
                if g.mode() != w.mode() {
                    problems.push(format!("{path}: mode {} instead of {}", g.mode(), w.mode()));
                }
                if let (Node::File { bytes: wb, .. }, Node::File { bytes: gb, .. }) = (w, g) {
                    if wb != gb {
                        problems.push(format!("{path}: content differs"));
                        diff.push_str(&short_diff(path, wb, gb));
                    }
                } else if let (Node::Link(a), Node::Link(b)) = (w, g)
                    && a != b
                {
                    problems.push(format!("{path}: link target differs"));
                }
            }
        }
    }
    for path in got.keys().filter(|p| !want.contains_key(*p)) {
        problems.push(format!("{path}: should not exist"));
    }
    (problems, diff)
}

/// expected vs got, at most 60 lines; line ends made visible so that a
/// CRLF or final-newline difference shows.
fn short_diff(path: &str, want: &[u8], got: &[u8]) -> String {
    let show = |b: &[u8]| String::from_utf8_lossy(b).replace('\r', "\\r");
    let (w, g) = (show(want), show(got));
    let text = similar::TextDiff::from_lines(&w, &g)
        .unified_diff()
        .context_radius(2)
        .header(&format!("expected/{path}"), &format!("got/{path}"))
        .to_string();
    let mut lines: Vec<&str> = text.lines().take(61).collect();
    if lines.len() > 60 {
        lines.truncate(60);
        lines.push("[… diff cut at 60 lines]");
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// HEAD's tree (`git ls-tree -r`) against the expected files: paths,
/// modes and blob ids.
pub fn compare_head(want: &Tree, listing: &[u8]) -> Vec<String> {
    let mut got: BTreeMap<String, (String, String)> = BTreeMap::new();
    for rec in listing.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let rec = String::from_utf8_lossy(rec);
        let Some((info, path)) = rec.split_once('\t') else {
            continue;
        };
        let f: Vec<&str> = info.split(' ').collect();
        if f.len() == 3 {
            got.insert(path.to_string(), (f[0].to_string(), f[2].to_string()));
        }
    }
    let mut problems = Vec::new();
    for (path, node) in want {
        match got.get(path) {
            None => problems.push(format!("HEAD: {path} missing")),
            Some((mode, oid)) => {
                if mode != node.mode() {
                    problems.push(format!(
                        "HEAD: {path} mode {mode} instead of {}",
                        node.mode()
                    ));
                }
                if *oid != node.blob_id() {
                    problems.push(format!("HEAD: {path} blob differs from the expected"));
                }
            }
        }
    }
    for path in got.keys().filter(|p| !want.contains_key(*p)) {
        problems.push(format!("HEAD: {path} should not be there"));
    }
    problems
}
