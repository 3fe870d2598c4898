//! Watching a batch body's items go by while it streams, without parsing it:
//! how many elements the top object's value holds so far, and how large the
//! one being read is, so that an item over the params cap, or one item past
//! `[batches] max_items`, is refused on the byte that crosses the line
//! rather than after the whole body was buffered and parsed.
//!
//! It tracks only what JSON needs to find element boundaries: nesting depth
//! and whether a byte is inside a string (with its escapes). The body is
//! parsed properly afterwards; a malformed one is refused there.

/// Where the scan stands, fed chunk by chunk.
#[derive(Debug, Default)]
pub struct ItemScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Elements of the top object's values seen so far (their first byte).
    items: usize,
    /// Bytes of the element being read, from its first byte.
    item_bytes: usize,
    /// Whether the element being read has begun (a byte other than whitespace).
    in_item: bool,
}

/// A limit an item stream crossed.
#[derive(Debug, PartialEq, Eq)]
pub enum ItemLimit {
    /// This many items and more: over the batch's cap.
    TooMany(usize),
    /// The item at this index (0-based) is larger than the cap.
    TooLarge(usize),
}

impl ItemScan {
    /// Feeds the next bytes; fails on the first limit they cross.
    pub fn feed(&mut self, bytes: &[u8], max_items: usize, max_item_bytes: usize) -> Result<(), ItemLimit> {
        for &byte in bytes {
            let (depth, in_string) = (self.depth, self.in_string);
            self.track(byte);
            // Depth 2 is inside a value of the top object: `{"items": [ here ]}`.
            // The bracket that opens it, and the top object's keys, are no item's.
            if depth < 2 {
                continue;
            }
            // A separator, or the bracket that closes the list, ends an item.
            if !in_string && depth == 2 && matches!(byte, b',' | b']' | b'}') {
                self.in_item = false;
                continue;
            }
            // Between elements, or after one's last byte, whitespace is no
            // item's (a scalar holds none outside a string).
            if !in_string && depth == 2 && byte.is_ascii_whitespace() {
                continue;
            }
            if !self.in_item {
                self.in_item = true;
                self.items += 1;
                self.item_bytes = 0;
                if self.items > max_items {
                    return Err(ItemLimit::TooMany(self.items));
                }
            }
            self.item_bytes += 1;
            if self.item_bytes > max_item_bytes {
                return Err(ItemLimit::TooLarge(self.items - 1));
            }
        }
        Ok(())
    }

    /// Moves the string and nesting state past `byte`.
    fn track(&mut self, byte: u8) {
        if self.in_string {
            match (self.escaped, byte) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return;
        }
        match byte {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// The scan of `body` fed in chunks of `chunk` bytes.
    fn scan(body: &[u8], chunk: usize, max_items: usize, max_item_bytes: usize) -> Result<ItemScan, ItemLimit> {
        let mut scan = ItemScan::default();
        for piece in body.chunks(chunk.max(1)) {
            scan.feed(piece, max_items, max_item_bytes)?;
        }
        Ok(scan)
    }

    #[test]
    fn items_are_counted_and_measured_whatever_they_hold() {
        let body = br#"{"items": [ {"a": "x,]}\"{["}, {"b": [1, 2, {"c": 3}]} ,{} ]}"#;
        assert_eq!(scan(body, 3, 10, 100).unwrap().items, 3);
        assert_eq!(scan(body, 7, 2, 100).unwrap_err(), ItemLimit::TooMany(3));
        // The first item, `{"a": "x,]}\"{["}`, is 17 bytes; the second, 23
        // (the whitespace after it is no part of it).
        assert_eq!(scan(body, 5, 10, 16).unwrap_err(), ItemLimit::TooLarge(0));
        assert_eq!(scan(body, 5, 10, 22).unwrap_err(), ItemLimit::TooLarge(1));
        assert!(scan(body, 5, 10, 23).is_ok());
        assert_eq!(scan(br#"{"items": []}"#, 1, 10, 10).unwrap().items, 0);
    }

    fn item() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            any::<i64>().prop_map(Value::from),
            "[ -~\\\\\"\u{e9}\u{2028}]{0,12}".prop_map(Value::from),
            Just(Value::Null),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[a-z,\\]\"]{1,4}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever the items and however the body is cut into chunks, the
        /// scan counts the items serde_json finds, and the largest it
        /// measures is the largest item's own text.
        #[test]
        fn the_scan_agrees_with_a_parse(items in prop::collection::vec(item(), 0..8), chunk in 1usize..40, pretty: bool) {
            let body = json!({ "items": items });
            let text = if pretty { serde_json::to_vec_pretty(&body).unwrap() } else { serde_json::to_vec(&body).unwrap() };
            let scanned = scan(&text, chunk, usize::MAX, usize::MAX).unwrap();
            prop_assert_eq!(scanned.items, items.len());
            if !pretty && !items.is_empty() {
                let largest = items.iter().map(|i| serde_json::to_vec(i).unwrap().len()).max().unwrap();
                prop_assert!(scan(&text, chunk, usize::MAX, largest).is_ok());
                prop_assert_eq!(scan(&text, chunk, usize::MAX, largest - 1).unwrap_err(),
                    ItemLimit::TooLarge(items.iter().position(|i| serde_json::to_vec(i).unwrap().len() == largest).unwrap()));
            }
        }
    }
}
