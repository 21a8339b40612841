//! Reading a message field by field, for the hand-written decoders: each field's key with its
//! bytes or varint value, and a refusal (`None`) of anything the fast paths leave to prost.

use super::size::{LEN, VARINT};
use super::varint;

/// A cursor over the fields of one message.
pub(super) struct Fields<'a>(pub(super) &'a [u8]);

/// One field: its key and, for a length-delimited field, its bytes; for a varint, its value.
pub(super) enum Field<'a> {
    Bytes(u64, &'a [u8]),
    Varint(u64, u64),
}

impl<'a> Fields<'a> {
    /// The next field; `None` at the end, `Some(None)` for anything but a well-formed varint
    /// or length-delimited field with a one-byte key.
    pub(super) fn next_field(&mut self) -> Option<Option<Field<'a>>> {
        let (&key, rest) = self.0.split_first()?;
        let Some((value, len)) = varint::read_long(rest, 9) else {
            return Some(None);
        };
        let rest = &rest[len..];
        let field = match u32::from(key) & 7 {
            _ if key >= 0x80 => None,
            VARINT => {
                self.0 = rest;
                Some(Field::Varint(u64::from(key), value))
            }
            LEN => {
                let len = usize::try_from(value).ok().filter(|&len| len <= rest.len());
                len.map(|len| {
                    let (bytes, rest) = rest.split_at(len);
                    self.0 = rest;
                    Field::Bytes(u64::from(key), bytes)
                })
            }
            _ => None,
        };
        Some(field)
    }

    /// The message's only field, when it is a length-delimited one with key `expected`.
    pub(super) fn only(mut self, expected: u64) -> Option<&'a [u8]> {
        match self.next_field()?? {
            Field::Bytes(key, bytes) if key == expected && self.0.is_empty() => Some(bytes),
            _ => None,
        }
    }
}

/// Reads the fields of a message whose fields the fast path knows have one-byte keys (tags
/// 1 to 15), each at most once, handing each to `read`, which stores it and says its tag
/// (`None`: a field it does not take). `None` for a repeated field, or anything else unusual.
pub(super) fn read_fields<'a>(
    bytes: &'a [u8],
    mut read: impl FnMut(Field<'a>) -> Option<u32>,
) -> Option<()> {
    let mut seen = [false; 16];
    let mut fields = Fields(bytes);
    while let Some(field) = fields.next_field() {
        let tag = read(field?)?;
        if std::mem::replace(seen.get_mut(tag as usize)?, true) {
            return None;
        }
    }
    Some(())
}
