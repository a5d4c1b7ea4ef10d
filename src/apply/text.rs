//! A file's text as SEARCH sees it: LF-normalised, BOM removed, with a map
//! back to the original bytes.
//!
//! Owns the promise of apply.md §5 that matching happens on LF-normalised
//! text while the written file keeps its line endings, BOM and every byte
//! outside the matches: matches are found in [`Text::norm`] and spliced
//! into the original bytes through [`Text::original_offset`].

const BOM: &[u8] = b"\xef\xbb\xbf";

/// How many bytes git looks at to decide that a file is binary.
const BINARY_SNIFF: usize = 8000;

/// The line ending a file mostly uses; replacement text gets the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    CrLf,
    Cr,
}

impl LineEnding {
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            LineEnding::Lf => b"\n",
            LineEnding::CrLf => b"\r\n",
            LineEnding::Cr => b"\r",
        }
    }
}

/// Whether `bytes` look binary the way git decides it: a NUL byte in the
/// first 8000 bytes.
pub fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF)]).is_some()
}

/// A file prepared for matching.
#[derive(Debug)]
pub struct Text<'a> {
    original: &'a [u8],
    /// Length of the BOM at the start of `original` (0 or 3).
    bom: usize,
    /// The text after the BOM with every CRLF and lone CR turned into LF.
    norm: Vec<u8>,
    /// Positions of the LFs in `norm` that were two bytes (CRLF) in the
    /// original; empty for a file without CR.
    crlf_at: Vec<usize>,
    /// The most common line ending (LF for a file without any).
    pub ending: LineEnding,
}

impl<'a> Text<'a> {
    pub fn new(original: &'a [u8]) -> Text<'a> {
        let bom = if original.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        let body = &original[bom..];
        if memchr::memchr(b'\r', body).is_none() {
            return Text {
                original,
                bom,
                norm: body.to_vec(),
                crlf_at: Vec::new(),
                ending: LineEnding::Lf,
            };
        }
        let mut norm = Vec::with_capacity(body.len());
        let mut crlf_at = Vec::new();
        let (mut lf, mut crlf, mut cr) = (0usize, 0usize, 0usize);
        let mut i = 0;
        while i < body.len() {
            match body[i] {
                b'\r' if body.get(i + 1) == Some(&b'\n') => {
                    crlf_at.push(norm.len());
                    norm.push(b'\n');
                    crlf += 1;
                    i += 2;
                }
                b'\r' => {
                    norm.push(b'\n');
                    cr += 1;
                    i += 1;
                }
                b => {
                    if b == b'\n' {
                        lf += 1;
                    }
                    norm.push(b);
                    i += 1;
                }
            }
        }
        let ending = if crlf >= lf && crlf >= cr {
            LineEnding::CrLf
        } else if cr > lf {
            LineEnding::Cr
        } else {
            LineEnding::Lf
        };
        Text {
            original,
            bom,
            norm,
            crlf_at,
            ending,
        }
    }

    /// The LF-normalised text, without BOM.
    pub fn norm(&self) -> &[u8] {
        &self.norm
    }

    /// The offset in the original bytes of offset `at` of [`Text::norm`].
    pub fn original_offset(&self, at: usize) -> usize {
        // Every CRLF before `at` is one byte longer in the original.
        self.bom + at + self.crlf_at.partition_point(|&p| p < at)
    }

    /// 1-based line number of offset `at` of [`Text::norm`].
    pub fn line_of(&self, at: usize) -> u32 {
        1 + memchr::memchr_iter(b'\n', &self.norm[..at]).count() as u32
    }

    /// 1-based line numbers of the offsets in `sorted` (ascending), in one
    /// pass over the text.
    pub fn lines_of(&self, sorted: impl IntoIterator<Item = usize>) -> Vec<u32> {
        let mut out = Vec::new();
        let (mut line, mut counted) = (1u32, 0usize);
        for at in sorted {
            line += memchr::memchr_iter(b'\n', &self.norm[counted..at]).count() as u32;
            counted = at;
            out.push(line);
        }
        out
    }

    /// `text` (LF line ends) with the file's own line ending.
    pub fn with_file_endings(&self, text: &str) -> Vec<u8> {
        if self.ending == LineEnding::Lf {
            return text.as_bytes().to_vec();
        }
        let mut out = Vec::with_capacity(text.len() + text.len() / 16);
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.extend_from_slice(self.ending.as_bytes());
            }
            out.extend_from_slice(line.as_bytes());
        }
        out
    }

    /// The original bytes with each normalised range in `edits` (sorted,
    /// not overlapping) replaced by its bytes.
    pub fn splice(&self, edits: &[(std::ops::Range<usize>, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.original.len());
        let mut copied = 0;
        for (range, with) in edits {
            // Edits come sorted and apart; one that overlapped the one
            // before would start where that one ended (never a panic).
            let start = self.original_offset(range.start).max(copied);
            let end = self.original_offset(range.end).max(start);
            out.extend_from_slice(&self.original[copied..start]);
            out.extend_from_slice(with);
            copied = end;
        }
        out.extend_from_slice(&self.original[copied..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lf_files_map_one_to_one_after_the_bom() {
        let t = Text::new(b"\xef\xbb\xbfab\ncd");
        assert_eq!(t.norm(), b"ab\ncd");
        assert_eq!(t.original_offset(3), 6);
        assert_eq!(t.line_of(3), 2);
        assert_eq!(t.ending, LineEnding::Lf);
    }

    #[test]
    fn crlf_files_keep_their_endings_outside_and_inside_edits() {
        let t = Text::new(b"a\r\nb\r\nc\r\n");
        assert_eq!(t.norm(), b"a\nb\nc\n");
        assert_eq!(t.ending, LineEnding::CrLf);
        // Replace "b\nc" (norm 2..5) by "x\ny".
        let with = t.with_file_endings("x\ny");
        assert_eq!(t.splice(&[(2..5, with)]), b"a\r\nx\r\ny\r\n");
    }

    #[test]
    fn mixed_endings_pick_the_most_common_and_map_exactly() {
        let t = Text::new(b"a\rb\r\nc\nd\r\n");
        assert_eq!(t.norm(), b"a\nb\nc\nd\n");
        assert_eq!(t.ending, LineEnding::CrLf);
        assert_eq!(t.splice(&[(4..5, b"C".to_vec())]), b"a\rb\r\nC\nd\r\n");
    }

    #[test]
    fn binary_is_a_nul_in_the_first_8000_bytes() {
        assert!(is_binary(b"ab\0c"));
        assert!(!is_binary(b"plain text"));
        let mut late = vec![b'a'; 9000];
        late[8500] = 0;
        assert!(!is_binary(&late));
    }
}
