//! Sets of bytes for the checks that read every byte of a request's host or path: a table of
//! 256 answers built at compile time, so a byte is one load. The plain spelling,
//! `byte.is_ascii_alphanumeric() || b"-._~".contains(&byte)`, searches the list for every
//! byte that is not a letter or digit, with a call; on a ping that search was more than 1% of
//! the request's instructions in the `Host` check and again in the access line's path
//! (BENCHMARKS.md, "The contract's floor").

/// Which of the 256 byte values belong.
pub struct ByteSet([bool; 256]);

impl ByteSet {
    /// The ASCII letters and digits, and `others`.
    pub const fn alphanumeric_and(others: &[u8]) -> Self {
        let mut table = [false; 256];
        let mut byte = 0;
        while byte < table.len() {
            table[byte] = (byte as u8).is_ascii_alphanumeric();
            byte += 1;
        }
        let mut index = 0;
        while index < others.len() {
            table[others[index] as usize] = true;
            index += 1;
        }
        Self(table)
    }

    pub const fn contains(&self, byte: u8) -> bool {
        self.0[byte as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_the_letters_the_digits_and_what_it_names_and_nothing_else() {
        let set = ByteSet::alphanumeric_and(b"-._~");
        for byte in 0..=u8::MAX {
            assert_eq!(
                set.contains(byte),
                byte.is_ascii_alphanumeric() || b"-._~".contains(&byte),
                "byte {byte}"
            );
        }
    }
}
