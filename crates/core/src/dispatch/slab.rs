//! The dispatches in flight, by id. An id is a slot index with the slot's generation above it, so
//! an id kept past its dispatch's end (a late callback, a bug in a command loop) finds nothing
//! instead of driving the dispatch that reused its slot.

/// Bits of an id that index the slot: up to 2^20 dispatches in flight at once.
const INDEX_BITS: u32 = 20;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
/// Generations wrap after 2^12 reuses of one slot.
const GENERATION_MASK: u32 = u32::MAX >> INDEX_BITS;

/// Slots of `T` addressed by generational ids (`u32`, so an id crosses to JS as a plain number).
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    live: usize,
}

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value` and returns its id, or `None` when 2^20 values are already held.
    pub fn insert(&mut self, value: T) -> Option<u32> {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                let i = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&i| i <= INDEX_MASK)?;
                self.slots.push(Slot {
                    generation: 0,
                    value: None,
                });
                i
            }
        };
        let slot = &mut self.slots[index as usize];
        slot.value = Some(value);
        self.live += 1;
        Some(slot.generation << INDEX_BITS | index)
    }

    /// The value of `id`, if it is still held under that very id.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        let slot = self.slots.get_mut((id & INDEX_MASK) as usize)?;
        if slot.generation != id >> INDEX_BITS {
            return None;
        }
        slot.value.as_mut()
    }

    /// Forgets `id`'s value, dropped where it lies (not moved out of its slot first); its slot's
    /// next id differs. Whether `id` named a live value (a stale id forgets nothing).
    pub fn discard(&mut self, id: u32) -> bool {
        let index = id & INDEX_MASK;
        let Some(slot) = self.slots.get_mut(index as usize) else {
            return false;
        };
        if slot.generation != id >> INDEX_BITS || slot.value.is_none() {
            return false;
        }
        slot.value = None;
        slot.generation = (slot.generation + 1) & GENERATION_MASK;
        self.free.push(index);
        self.live -= 1;
        true
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_id_finds_nothing_after_its_slot_is_reused() {
        let mut slab = Slab::default();
        let a = slab.insert("a").unwrap();
        assert_eq!(slab.get_mut(a), Some(&mut "a"));
        assert!(slab.discard(a));
        let b = slab.insert("b").unwrap();
        assert_ne!(a, b, "the reused slot has a new id");
        assert_eq!(a & INDEX_MASK, b & INDEX_MASK, "the same slot");
        assert_eq!(slab.get_mut(a), None);
        assert!(!slab.discard(a), "a stale id cannot end the new value");
        assert_eq!(slab.get_mut(b), Some(&mut "b"));
        assert_eq!(slab.len(), 1);
    }

    #[test]
    fn ids_stay_distinct_across_many_reuses_and_wrap_without_panicking() {
        let mut slab = Slab::default();
        let mut last = None;
        for i in 0..(GENERATION_MASK as usize + 3) {
            let id = slab.insert(i).unwrap();
            if let Some(prev) = last {
                assert_ne!(id, prev);
                assert_eq!(slab.get_mut(prev), None);
            }
            assert_eq!(slab.get_mut(id), Some(&mut i.clone()));
            assert!(slab.discard(id));
            last = Some(id);
        }
        assert!(slab.is_empty());
    }

    #[test]
    fn a_discarded_value_is_dropped_once_and_its_slot_reused() {
        let value = std::rc::Rc::new(());
        let mut slab = Slab::default();
        let id = slab.insert(std::rc::Rc::clone(&value)).unwrap();
        assert_eq!(std::rc::Rc::strong_count(&value), 2);
        assert!(slab.discard(id));
        assert_eq!(std::rc::Rc::strong_count(&value), 1, "dropped at once");
        assert!(!slab.discard(id), "a second discard finds nothing");
        assert!(slab.is_empty());
        let next = slab.insert(std::rc::Rc::clone(&value)).unwrap();
        assert_eq!(next & INDEX_MASK, id & INDEX_MASK, "the same slot, reused");
        assert!(!slab.discard(id), "the stale id cannot end the new value");
        assert_eq!(slab.len(), 1);
    }

    #[test]
    fn unknown_and_out_of_range_ids_find_nothing() {
        let mut slab: Slab<u8> = Slab::default();
        assert_eq!(slab.get_mut(0), None);
        assert!(!slab.discard(u32::MAX));
        let id = slab.insert(1).unwrap();
        assert_eq!(slab.get_mut(id ^ (1 << INDEX_BITS)), None);
    }
}
