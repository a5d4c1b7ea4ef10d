//! Compact JSON for serde: the bytes `serde_json::to_writer` writes, sooner.
//!
//! Owns how `parse --format json` turns the serde model of `json` into
//! bytes; it knows nothing of CSL. The JSON of a large reply is as large as
//! the reply, and most of it is content, a string per operation ending each
//! line in `\n`. serde_json looks at strings a byte at a time and calls its
//! writer for every run between two escapes; this writer looks at eight
//! bytes at a time and copies into a buffer of its own. On the 20 MB
//! replies of `bench/parse.sh` that is 6.7 instead of 11.5 ms (mixed) and
//! 12 instead of 18 ms (many small operations).
//!
//! The output is byte for byte serde_json's (the tests compare them),
//! serde_json's `RawValue` included; floating-point numbers, which a
//! reply's JSON does not have, are written by serde_json itself.

use std::fmt;
use std::io;

use serde::ser::{self, Impossible, Serialize};

/// Writes `value` to `out` as compact JSON, the same bytes as
/// `serde_json::to_writer`. `out` receives a few large writes.
pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(out: W, value: &T) -> io::Result<()> {
    let mut writer = Writer {
        out,
        buf: vec![0; BUF_LEN].into_boxed_slice(),
        len: 0,
    };
    value.serialize(&mut writer).map_err(|e| e.0)?;
    writer.flush()
}

/// A serialisation error: the writer's, or a `Serialize` impl's own.
#[derive(Debug)]
pub struct Error(io::Error);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Error {
        Error(io::Error::other(msg.to_string()))
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error(e)
    }
}

fn key_must_be_a_string() -> Error {
    Error(io::Error::other("key must be a string"))
}

fn float_key_must_be_finite() -> Error {
    Error(io::Error::other("float key must be finite"))
}

type Result<T> = std::result::Result<T, Error>;

/// The size of the writes to `out`: large, for few system calls, and
/// larger than a 64 KiB `BufWriter` around `out` would be, which passes
/// such writes straight on instead of copying them.
const BUF_LEN: usize = 128 * 1024;

/// Room one step of string escaping needs: it writes up to 13 bytes, a
/// word's seven bytes before a `\u00XX` escape and the escape.
const STEP: usize = 16;

/// The name under which serde_json's `RawValue` serialises itself, as a
/// struct with one field of that name holding JSON text, which serde_json
/// writes as it is (with its `raw_value` feature, which the project uses).
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// The longest string [`Writer::string`] checks a byte at a time.
const SHORT: usize = 24;

/// What `"`, `\` and the control characters are escaped with (`u`:
/// `\u00XX`); 0 for the bytes written as they are. serde_json's table.
static ESCAPE: [u8; 256] = {
    let mut table = [0; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    table[0x08] = b'b';
    table[b'\t' as usize] = b't';
    table[b'\n' as usize] = b'n';
    table[0x0c] = b'f';
    table[b'\r' as usize] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// The bytes of `word` (little-endian: its first byte is the lowest) that
/// need escaping, as a mask with the top bit of each such byte set: a
/// control character, `"` or `\`. Zero when there is none. The lowest set
/// bit is exact; bits above it may be false (borrows), which does not
/// matter, since the caller escapes one byte and looks again after it.
fn needs_escape(word: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = ONES * 0x80;
    let below = |n: u8| word.wrapping_sub(ONES * n as u64) & !word & HIGH;
    let equal = |c: u8| {
        let x = word ^ (ONES * c as u64);
        x.wrapping_sub(ONES) & !x & HIGH
    };
    below(0x20) | equal(b'"') | equal(b'\\')
}

/// Writes the JSON string contents of as much of `src` as fits into `dst`
/// (all of it, or until fewer than [`STEP`] bytes of `dst` are left), and
/// returns how many bytes it wrote and how many it read. A free function
/// over plain slices, so that the loop's state stays in registers.
fn escape_into(dst: &mut [u8], src: &[u8]) -> (usize, usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let (mut out, mut i) = (0, 0);
    while out + STEP <= dst.len() && i < src.len() {
        if let Some(word) = src.get(i..i + 8) {
            // Copy the whole word, then keep the part before the first byte
            // to escape, if any: cheaper than finding the part first.
            let word: [u8; 8] = word.try_into().expect("eight bytes");
            dst[out..out + 8].copy_from_slice(&word);
            let special = needs_escape(u64::from_le_bytes(word));
            if special == 0 {
                out += 8;
                i += 8;
                continue;
            }
            let plain = special.trailing_zeros() as usize / 8;
            out += plain;
            i += plain;
        }
        // The byte at `i` needs escaping, or is one of the last seven.
        let b = src[i];
        i += 1;
        match ESCAPE[b as usize] {
            0 => {
                dst[out] = b;
                out += 1;
            }
            b'u' => {
                let hex = [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]];
                dst[out..out + 6].copy_from_slice(&[b'\\', b'u', b'0', b'0', hex[0], hex[1]]);
                out += 6;
            }
            c => {
                dst[out..out + 2].copy_from_slice(&[b'\\', c]);
                out += 2;
            }
        }
    }
    (out, i)
}

struct Writer<W> {
    out: W,
    buf: Box<[u8]>,
    /// Bytes of `buf` in use.
    len: usize,
}

impl<W: io::Write> Writer<W> {
    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf[..self.len])?;
        self.len = 0;
        Ok(())
    }

    /// Makes room in the buffer for `n` (at most [`BUF_LEN`]) more bytes.
    #[inline]
    fn reserve(&mut self, n: usize) -> io::Result<()> {
        if self.len + n > self.buf.len() {
            self.flush()?;
        }
        Ok(())
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.len() > self.buf.len() {
            self.flush()?;
            return self.out.write_all(bytes);
        }
        self.reserve(bytes.len())?;
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
        Ok(())
    }

    fn string(&mut self, s: &str) -> io::Result<()> {
        let mut rest = s.as_bytes();
        // Keys and most values are short and need no escape: checked a
        // byte at a time and copied at once, they cost less than the loop
        // over words would.
        if rest.len() <= SHORT && rest.iter().all(|&b| ESCAPE[b as usize] == 0) {
            self.reserve(SHORT + 2)?;
            let buf = &mut self.buf[self.len..];
            buf[0] = b'"';
            buf[1..=rest.len()].copy_from_slice(rest);
            buf[rest.len() + 1] = b'"';
            self.len += rest.len() + 2;
            return Ok(());
        }
        self.write(b"\"")?;
        loop {
            let (written, read) = escape_into(&mut self.buf[self.len..], rest);
            self.len += written;
            rest = &rest[read..];
            if rest.is_empty() {
                break;
            }
            self.flush()?;
        }
        self.write(b"\"")
    }

    fn integer(&mut self, negative: bool, mut value: u64) -> io::Result<()> {
        let mut digits = [0u8; 21];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (value % 10) as u8;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        if negative {
            i -= 1;
            digits[i] = b'-';
        }
        self.write(&digits[i..])
    }

    /// Writes the JSON text that `value`, a string, holds, as it is: what
    /// serde_json writes for its `RawValue`.
    fn raw<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        match serde_json::to_value(value) {
            Ok(serde_json::Value::String(text)) => Ok(self.write(text.as_bytes())?),
            _ => Err(ser::Error::custom("a raw JSON value holds no text")),
        }
    }

    /// Writes what serde_json writes for `value`: for the numbers this
    /// writer leaves to it (floats, 128-bit integers).
    fn like_serde_json<T: Serialize>(&mut self, value: T) -> Result<()> {
        let text = serde_json::to_vec(&value).map_err(io::Error::from)?;
        Ok(self.write(&text)?)
    }
}

impl<'a, W: io::Write> ser::Serializer for &'a mut Writer<W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, W>;
    type SerializeTuple = Compound<'a, W>;
    type SerializeTupleStruct = Compound<'a, W>;
    type SerializeTupleVariant = Compound<'a, W>;
    type SerializeMap = Compound<'a, W>;
    type SerializeStruct = Compound<'a, W>;
    type SerializeStructVariant = Compound<'a, W>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        Ok(self.write(if v { b"true" } else { b"false" })?)
    }

    fn serialize_i8(self, v: i8) -> Result<()> {
        self.serialize_i64(v.into())
    }

    fn serialize_i16(self, v: i16) -> Result<()> {
        self.serialize_i64(v.into())
    }

    fn serialize_i32(self, v: i32) -> Result<()> {
        self.serialize_i64(v.into())
    }

    fn serialize_i64(self, v: i64) -> Result<()> {
        Ok(self.integer(v < 0, v.unsigned_abs())?)
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        self.like_serde_json(v)
    }

    fn serialize_u8(self, v: u8) -> Result<()> {
        self.serialize_u64(v.into())
    }

    fn serialize_u16(self, v: u16) -> Result<()> {
        self.serialize_u64(v.into())
    }

    fn serialize_u32(self, v: u32) -> Result<()> {
        self.serialize_u64(v.into())
    }

    fn serialize_u64(self, v: u64) -> Result<()> {
        Ok(self.integer(false, v)?)
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        self.like_serde_json(v)
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        self.like_serde_json(v)
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        self.like_serde_json(v)
    }

    fn serialize_char(self, v: char) -> Result<()> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<()> {
        Ok(self.string(v)?)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        ser::Serializer::collect_seq(self, v)
    }

    fn serialize_none(self) -> Result<()> {
        Ok(self.write(b"null")?)
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.serialize_none()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_none()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.write(b"{")?;
        self.string(variant)?;
        self.write(b":")?;
        value.serialize(&mut *self)?;
        Ok(self.write(b"}")?)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a, W>> {
        Compound::open(self, b"[", b"]")
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, W>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a, W>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, W>> {
        self.write(b"{")?;
        self.string(variant)?;
        Compound::open(self, b":[", b"]}")
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a, W>> {
        Compound::open(self, b"{", b"}")
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'a, W>> {
        if name == RAW_VALUE {
            let mut raw = Compound::open(self, b"", b"")?;
            raw.raw = true;
            return Ok(raw);
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, W>> {
        self.write(b"{")?;
        self.string(variant)?;
        Compound::open(self, b":{", b"}}")
    }
}

/// An array or object being written.
pub struct Compound<'a, W> {
    writer: &'a mut Writer<W>,
    first: bool,
    close: &'static [u8],
    /// serde_json's `RawValue`, whose one field is JSON text.
    raw: bool,
}

impl<'a, W: io::Write> Compound<'a, W> {
    fn open(
        writer: &'a mut Writer<W>,
        open: &[u8],
        close: &'static [u8],
    ) -> Result<Compound<'a, W>> {
        writer.write(open)?;
        Ok(Compound {
            writer,
            first: true,
            close,
            raw: false,
        })
    }

    /// Writes the comma before every element but the first.
    fn next(&mut self) -> io::Result<()> {
        if !std::mem::take(&mut self.first) {
            self.writer.write(b",")?;
        }
        Ok(())
    }

    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.next()?;
        value.serialize(&mut *self.writer)
    }

    fn field<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Result<()> {
        self.next()?;
        self.writer.string(key)?;
        self.writer.write(b":")?;
        value.serialize(&mut *self.writer)
    }

    fn close(self) -> Result<()> {
        Ok(self.writer.write(self.close)?)
    }
}

impl<W: io::Write> ser::SerializeSeq for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }

    fn end(self) -> Result<()> {
        self.close()
    }
}

impl<W: io::Write> ser::SerializeTuple for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }

    fn end(self) -> Result<()> {
        self.close()
    }
}

impl<W: io::Write> ser::SerializeTupleStruct for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }

    fn end(self) -> Result<()> {
        self.close()
    }
}

impl<W: io::Write> ser::SerializeTupleVariant for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }

    fn end(self) -> Result<()> {
        self.close()
    }
}

impl<W: io::Write> ser::SerializeMap for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.next()?;
        key.serialize(KeyWriter(&mut *self.writer))?;
        Ok(self.writer.write(b":")?)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<()> {
        self.close()
    }
}

impl<W: io::Write> ser::SerializeStruct for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        if self.raw {
            return self.writer.raw(value);
        }
        self.field(key, value)
    }

    fn end(self) -> Result<()> {
        self.close()
    }
}

impl<W: io::Write> ser::SerializeStructVariant for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.field(key, value)
    }

    fn end(self) -> Result<()> {
        self.close()
    }
}

/// An object key. As in serde_json: strings, and numbers and booleans in
/// quotes; anything else is an error.
struct KeyWriter<'a, W>(&'a mut Writer<W>);

impl<W: io::Write> KeyWriter<'_, W> {
    /// `value` in quotes, as serde_json writes it.
    fn quoted<T: Serialize>(self, value: T) -> Result<()> {
        self.0.write(b"\"")?;
        value.serialize(&mut *self.0)?;
        Ok(self.0.write(b"\"")?)
    }
}

impl<W: io::Write> ser::Serializer for KeyWriter<'_, W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i8(self, v: i8) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i16(self, v: i16) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i32(self, v: i32) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i64(self, v: i64) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u8(self, v: u8) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u16(self, v: u16) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u32(self, v: u32) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u64(self, v: u64) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(v)
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(v)
    }

    fn serialize_char(self, v: char) -> Result<()> {
        v.serialize(self.0)
    }

    fn serialize_str(self, v: &str) -> Result<()> {
        v.serialize(self.0)
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_none(self) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit(self) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        variant.serialize(self.0)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::Serialize;

    use super::to_writer;
    use crate::csl::{self, Delimiters};

    /// What this writer writes for `value`, checked against serde_json.
    fn same_as_serde_json<T: ?Sized + Serialize>(value: &T) -> Vec<u8> {
        let mut ours = Vec::new();
        to_writer(&mut ours, value).expect("serialises");
        let theirs = serde_json::to_vec(value).expect("serialises");
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
        ours
    }

    #[test]
    fn escapes_as_serde_json_does() {
        let every_ascii: String = (0u8..0x80).map(char::from).collect();
        same_as_serde_json(&every_ascii);
        same_as_serde_json("\u{7f}é\u{2028}🚀\"\\\"\\\\\n\r\n\tx");
        // Runs of eight and around: the word-at-a-time path and the tail.
        for n in 0..20 {
            same_as_serde_json(&"a\"".repeat(n));
            same_as_serde_json(&format!("{}\n", "b".repeat(n)));
        }
        // Longer than the buffer, with and without escapes.
        same_as_serde_json(&"x".repeat(200_000));
        same_as_serde_json(&"line\n".repeat(40_000));
    }

    #[derive(Serialize)]
    enum Shapes {
        Unit,
        Newtype(u8),
        Tuple(i32, i32),
        Struct { a: Option<bool>, b: Vec<char> },
    }

    #[test]
    fn every_shape_is_written_as_serde_json_writes_it() {
        same_as_serde_json(&(
            (),
            Some(-5i64),
            None::<u8>,
            [i64::MIN, i64::MAX, 0],
            u64::MAX,
            (i128::MIN, u128::MAX),
            (1.5f64, f64::NAN, -0.0f32),
            b"bytes".as_slice(),
        ));
        same_as_serde_json(&[
            Shapes::Unit,
            Shapes::Newtype(7),
            Shapes::Tuple(-1, 2),
            Shapes::Struct {
                a: Some(true),
                b: vec!['x', '"'],
            },
        ]);
        same_as_serde_json(&Vec::<u8>::new());
        let keys: BTreeMap<i32, &str> = [(-3, "a"), (4, "b")].into();
        same_as_serde_json(&keys);
        same_as_serde_json(&BTreeMap::from([(true, 1)]));
        same_as_serde_json(&BTreeMap::from([('k', BTreeMap::<String, u8>::new())]));
    }

    #[test]
    fn a_raw_value_is_written_as_it_is() {
        let raw =
            serde_json::value::RawValue::from_string(r#"{"a" : [1, "\n"]}"#.into()).expect("JSON");
        same_as_serde_json(&raw);
        same_as_serde_json(&BTreeMap::from([("k", &raw)]));
    }

    #[test]
    fn a_key_that_is_no_string_is_an_error() {
        let map = BTreeMap::from([(vec![1], 2)]);
        assert!(to_writer(Vec::new(), &map).is_err());
        assert!(serde_json::to_vec(&map).is_err());
    }

    /// Every reply of the parse snapshot tests, and the benchmark's kind of
    /// content, as `parse --format json` prints them.
    #[test]
    fn parsed_replies_are_written_as_serde_json_writes_them() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("test-data/parse");
        let mut cases = 0;
        for entry in std::fs::read_dir(dir).expect("test-data/parse") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "csl") {
                let bytes = std::fs::read(&path).expect("case");
                same_as_serde_json(&csl::parse_bytes(&bytes, &Delimiters::default()));
                cases += 1;
            }
        }
        assert!(cases > 100, "only {cases} cases");
    }

    proptest! {
        #[test]
        fn any_string_is_written_as_serde_json_writes_it(s in any::<String>()) {
            same_as_serde_json(&s);
        }

        #[test]
        fn strings_of_what_needs_escaping_are_written_as_serde_json_writes_them(
            s in "[\\x00-\\x20\"\\\\a-c\\u{7f}é]{0,40}"
        ) {
            same_as_serde_json(&s);
        }
    }
}
