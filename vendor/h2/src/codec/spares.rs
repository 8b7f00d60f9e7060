//! The buffers a connection gives back while it is idle (this service's change; see
//! `Connection::poll`): a connection that waits for its peer, with nothing half read and
//! nothing left to write, holds no read or write buffer, so thousands of idle HTTP/2
//! connections hold none either. The buffers go to a short list per thread, from which the
//! next connection to read or write on that thread takes one back, warm; a buffer that grew,
//! or that something still refers to, is freed instead of kept.

use std::cell::RefCell;
use std::thread::LocalKey;

use bytes::BytesMut;

/// What a connection writes its frames into (upstream allocates 16 KiB, the minimum
/// MAX_FRAME_SIZE): a response's HEADERS and small DATA frames fit in 4 KiB; a larger frame
/// grows the buffer (`BytesMut` reserves as it is written), and a DATA payload larger than
/// the chain threshold is not copied into it at all. A connection waiting for its client to
/// read holds its write buffer, so its size counts once per such connection.
pub(crate) const WRITE_CAPACITY: usize = 4 * 1024;

/// What a connection reads frames into (`tokio-util`'s own initial capacity).
pub(crate) const READ_CAPACITY: usize = 8 * 1024;

/// Spares kept per thread and kind: at most 4 × 12 KiB = 48 KiB a thread (a worker serves one
/// connection at a time, so a few spares cover the connections that go idle and come back).
const KEPT: usize = 4;

thread_local! {
    static WRITE: RefCell<Vec<BytesMut>> = const { RefCell::new(Vec::new()) };
    static READ: RefCell<Vec<BytesMut>> = const { RefCell::new(Vec::new()) };
}

fn take(spares: &'static LocalKey<RefCell<Vec<BytesMut>>>, capacity: usize) -> BytesMut {
    spares
        .try_with(|spares| spares.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_else(|| BytesMut::with_capacity(capacity))
}

/// Keeps `buffer`, emptied, for the next taker, when it owns all of its allocation and that
/// is of the usual size; frees it otherwise.
fn give(spares: &'static LocalKey<RefCell<Vec<BytesMut>>>, mut buffer: BytesMut, capacity: usize) {
    buffer.clear();
    // Only a buffer nothing else refers to is kept: `try_reclaim` answers yes without looking
    // when the part after a split is already large enough, though a slice before it lives on.
    // Converting back succeeds only for the sole owner (the price: one small allocation).
    let Ok(mut buffer) = buffer.freeze().try_into_mut() else {
        return;
    };
    // After the buffer was split, `capacity()` shows only the part after the split;
    // reclaiming puts the whole allocation back.
    if buffer.try_reclaim(capacity) && buffer.capacity() <= 2 * capacity {
        let _ = spares.try_with(|spares| {
            let mut spares = spares.borrow_mut();
            if spares.len() < KEPT {
                spares.push(buffer);
            }
        });
    }
}

pub(crate) fn take_write() -> BytesMut {
    take(&WRITE, WRITE_CAPACITY)
}

pub(crate) fn give_write(buffer: BytesMut) {
    give(&WRITE, buffer, WRITE_CAPACITY)
}

pub(crate) fn take_read() -> BytesMut {
    take(&READ, READ_CAPACITY)
}

/// Gives back the read buffer `slot` holds. Decoded header values are slices of it, and one
/// may still be held elsewhere (actix-http keeps its last request heads for reuse, the URI of
/// one among them): then the buffer cannot be reused, and the connection lets go of its own
/// hold, so that the memory is freed when the last slice is.
pub(crate) fn give_read(slot: &mut BytesMut) {
    give(&READ, std::mem::take(slot), READ_CAPACITY);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_buffer_is_kept_and_taken_back() {
        let buffer = take_write();
        let address = buffer.as_ptr();
        give_write(buffer);
        assert_eq!(take_write().as_ptr(), address);
    }

    #[test]
    fn a_read_buffer_still_referred_to_is_let_go_not_kept() {
        let mut slot = BytesMut::with_capacity(READ_CAPACITY);
        slot.extend_from_slice(b"a header value the request still holds");
        let held = slot.split_to(10).freeze();
        let address = held.as_ptr();
        give_read(&mut slot);
        assert_eq!(slot.capacity(), 0, "the connection holds no buffer");
        let next = take_read();
        assert_ne!(next.as_ptr(), address, "not reused while a slice of it lives");
        assert_eq!(&held[..], b"a header v");
        // A whole one is kept and taken back.
        let mut whole = next;
        let address = whole.as_ptr();
        give_read(&mut whole);
        assert_eq!(take_read().as_ptr(), address);
    }

    #[test]
    fn a_large_buffer_still_referred_to_is_let_go_though_its_rest_is_large_enough() {
        let mut slot = BytesMut::with_capacity(2 * READ_CAPACITY);
        slot.extend_from_slice(b"a header value the request still holds");
        let held = slot.split_to(10).freeze();
        let start = held.as_ptr() as usize;
        give_read(&mut slot);
        let next = take_read();
        let address = next.as_ptr() as usize;
        assert!(
            !(start..start + 2 * READ_CAPACITY).contains(&address),
            "a spare must not share an allocation a slice still holds"
        );
        assert_eq!(&held[..], b"a header v");
    }
}
