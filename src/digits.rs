//! Decimal digits written without the formatting machinery, for the few numbers that every
//! request writes (the access line's status and duration, the quota fields): `core::fmt`
//! costs several hundred instructions a number where this costs a few dozen.

/// The decimal digits of `value`, written at the end of `buffer`.
pub fn decimal(value: u64, buffer: &mut [u8; 20]) -> &str {
    let mut value = value;
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    std::str::from_utf8(&buffer[start..]).expect("ASCII digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_those_of_display() {
        for value in [0, 7, 10, 429, 65_535, 1_234_567, u64::MAX] {
            assert_eq!(decimal(value, &mut [0; 20]), value.to_string());
        }
    }
}
