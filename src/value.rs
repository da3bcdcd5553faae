//! The value of a position for its side to move: what the databases store, 2 bits each.

use std::fmt;

/// A 2-bit position value. `Unknown` is 0 so that a fresh (sparse, zeroed) work file is all
/// unknown.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
#[repr(u8)]
pub enum Value {
    Unknown = 0,
    Win = 1,
    Loss = 2,
    Draw = 3,
}

impl Value {
    #[inline]
    pub fn from_bits(b: u8) -> Value {
        match b & 3 {
            0 => Value::Unknown,
            1 => Value::Win,
            2 => Value::Loss,
            _ => Value::Draw,
        }
    }

    /// The value for the side that moved into a position of value `self`.
    #[inline]
    pub fn for_mover(self) -> Value {
        match self {
            Value::Win => Value::Loss,
            Value::Loss => Value::Win,
            v => v,
        }
    }

    pub fn is_resolved(self) -> bool {
        matches!(self, Value::Win | Value::Loss)
    }

    pub fn name(self) -> &'static str {
        match self {
            Value::Unknown => "unknown",
            Value::Win => "win",
            Value::Loss => "loss",
            Value::Draw => "draw",
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
