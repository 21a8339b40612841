//! Sorting the out-neighbour lists of a graph for its id: nearly all of them are short, so a
//! list of up to 16 ids goes through a fixed sorting network (Batcher's odd-even merge sort),
//! without a branch on the data. Where the processor has AVX-512, each layer of the network is
//! one permutation, a minimum and a masked maximum over the whole list in one register (a
//! 256-bit one for up to 8 ids, half the work of a 512-bit one); with AVX2 alone, lists of up
//! to 8 ids take a permutation, a minimum, a maximum and a blend a layer; elsewhere the
//! network's compare-exchanges run one by one.

/// Sorts an out-neighbour list increasingly. (The standard sort's insertion sort
/// mispredicted about every other comparison on random lists: on 10^7 random lists of 10 ids
/// on average, the scalar network took 0.63 s and the standard sort 0.87 s.)
pub(super) fn sort_list(list: &mut [u32]) {
    match list.len() {
        0..=1 => {}
        2..=16 => sort_short(list),
        _ => list.sort_unstable(),
    }
}

/// Writes the consecutive lists `lists` is made of into `sorted` (as long), each sorted,
/// `lengths` giving their lengths (which add up to its length). With AVX-512 the networks are
/// chosen once for all of them; elsewhere each list is sorted by [`sort_list`].
pub(super) fn sort_lists_into(lists: &[u32], lengths: &[u32], sorted: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if x86::has_avx512() {
        // SAFETY: the processor has AVX-512F and AVX-512VL.
        unsafe { x86::sort_lists_into_avx512(lists, lengths, sorted) };
        return;
    }
    sort_lists_into_one_by_one(lists, lengths, sorted);
}

/// [`sort_lists_into`] as a copy, then [`sort_list`] on each list.
fn sort_lists_into_one_by_one(lists: &[u32], lengths: &[u32], sorted: &mut [u32]) {
    sorted.copy_from_slice(lists);
    let mut rest = sorted;
    for &length in lengths {
        let (list, after) = rest.split_at_mut(length as usize);
        sort_list(list);
        rest = after;
    }
}

/// Sorts a list of 2 to 16 ids with the fastest network this processor runs.
#[inline]
fn sort_short(list: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx512() {
            let (len, at) = (list.len(), list.as_mut_ptr());
            // SAFETY: the processor has AVX-512F and AVX-512VL; the list has at most 16 ids,
            // read and written in place.
            unsafe { x86::sort_avx512(at, at, len) };
            return;
        }
        if list.len() <= 8 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2; the list has at most 8 ids.
            unsafe { x86::sort8_avx2(list) };
            return;
        }
    }
    sort_short_scalar(list);
}

/// Sorts a list of up to 16 ids with the network's compare-exchanges one by one.
fn sort_short_scalar(list: &mut [u32]) {
    if list.len() <= 8 {
        network_sort::<8, 19>(list, &NETWORK_8);
    } else {
        network_sort::<16, 63>(list, &NETWORK_16);
    }
}

/// Batcher's odd-even merge sort network on `N` lanes (`N` a power of two), as its
/// `C` compare-exchange pairs, layer by layer (the pairs of a layer touch each lane at most
/// once).
const fn odd_even_network<const N: usize, const C: usize>() -> [(u8, u8); C] {
    let mut pairs = [(0u8, 0u8); C];
    let mut count = 0;
    let mut p = 1;
    while p < N {
        let mut k = p;
        while k >= 1 {
            let mut j = k % p;
            while j + k < N {
                let mut i = 0;
                while i < k && i + j + k < N {
                    if (i + j) / (2 * p) == (i + j + k) / (2 * p) {
                        pairs[count] = ((i + j) as u8, (i + j + k) as u8);
                        count += 1;
                    }
                    i += 1;
                }
                j += 2 * k;
            }
            k /= 2;
        }
        p *= 2;
    }
    assert!(count == C, "the network has C pairs");
    pairs
}

const NETWORK_8: [(u8, u8); 19] = odd_even_network::<8, 19>();
const NETWORK_16: [(u8, u8); 63] = odd_even_network::<16, 63>();

/// Sorts `list` (at most `N` ids) with `network`, padded to `N` lanes with `u32::MAX` (which
/// sorts last, after every id, equal ones included: only the first `len` lanes are kept).
#[inline(always)]
fn network_sort<const N: usize, const C: usize>(list: &mut [u32], network: &[(u8, u8); C]) {
    let len = list.len();
    let mut lanes = [u32::MAX; N];
    lanes[..len].copy_from_slice(list);
    // Unrolled: every index is a constant, so the lanes stay in registers.
    for &(a, b) in network {
        let (a, b) = (usize::from(a), usize::from(b));
        let (low, high) = (lanes[a].min(lanes[b]), lanes[a].max(lanes[b]));
        lanes[a] = low;
        lanes[b] = high;
    }
    list.copy_from_slice(&lanes[..len]);
}

/// A network as `L` layers for one register of `N` lanes: in layer `l`, lane `i` is compared
/// with lane `partner[l][i]` (itself when it has no pair in the layer), and takes the larger
/// of the two where bit `i` of `high[l]` is set, the smaller elsewhere.
struct Layers<const N: usize, const L: usize> {
    partner: [[u32; N]; L],
    high: [u32; L],
}

/// The layers of `network`, its pairs grouped in order: a pair joins the layer after the last
/// one that touched either of its lanes.
const fn layers<const N: usize, const C: usize, const L: usize>(
    network: &[(u8, u8); C],
) -> Layers<N, L> {
    let mut partner = [[0u32; N]; L];
    let mut layer = 0;
    while layer < L {
        let mut lane = 0;
        while lane < N {
            partner[layer][lane] = lane as u32;
            lane += 1;
        }
        layer += 1;
    }
    let mut high = [0u32; L];
    // The layer after the last one that used each lane.
    let mut free = [0usize; N];
    let mut count = 0;
    let mut pair = 0;
    while pair < C {
        let (a, b) = (network[pair].0 as usize, network[pair].1 as usize);
        let layer = if free[a] > free[b] { free[a] } else { free[b] };
        assert!(layer < L, "the network has at most L layers");
        partner[layer][a] = b as u32;
        partner[layer][b] = a as u32;
        high[layer] |= 1 << b;
        free[a] = layer + 1;
        free[b] = layer + 1;
        if layer + 1 > count {
            count = layer + 1;
        }
        pair += 1;
    }
    assert!(count == L, "the network has exactly L layers");
    Layers { partner, high }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Layers, NETWORK_8, NETWORK_16, layers};

    const LAYERS_16: Layers<16, 10> = layers::<16, 63, 10>(&NETWORK_16);
    const LAYERS_8: Layers<8, 6> = layers::<8, 19, 6>(&NETWORK_8);

    /// Whether the processor runs the AVX-512 networks (AVX-512F, and AVX-512VL for the
    /// 256-bit one).
    pub(super) fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }

    /// [`super::sort_lists_into`] with AVX-512. A list of up to 16 ids is read from `lists`
    /// and written to `sorted` by a network inlined into the loop, so the loop branches only
    /// on a list's length; and no list's load reads memory the list before it stores to.
    /// (Measured with the 16-lane network alone, before the 8-lane one was added: the id of
    /// the benchmark DAG took 60 ms sorting each list in place, 52 ms sorting into the
    /// scratch buffer. A masked load may wait for an earlier masked store to the same line.)
    ///
    /// # Safety
    /// The processor must have AVX-512F and AVX-512VL.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn sort_lists_into_avx512(
        lists: &[u32],
        lengths: &[u32],
        sorted: &mut [u32],
    ) {
        assert_eq!(
            lists.len(),
            sorted.len(),
            "the sorted lists take as much room"
        );
        let mut start = 0;
        for &length in lengths {
            let end = start + length as usize;
            let (list, out) = (&lists[start..end], &mut sorted[start..end]);
            if list.len() <= 16 {
                // SAFETY: the processor has AVX-512F and AVX-512VL; `list` and `out` have
                // the same length, at most 16.
                unsafe { sort_avx512(list.as_ptr(), out.as_mut_ptr(), list.len()) };
            } else {
                out.copy_from_slice(list);
                super::sort_list(out);
            }
            start = end;
        }
    }

    /// Reads `len` ids (at most 16) from `from` and writes them sorted to `to` (which may be
    /// `from`), through one register padded with `u32::MAX`: a 256-bit one for up to 8 ids.
    ///
    /// # Safety
    /// The processor must have AVX-512F and AVX-512VL; `from` must be valid for reading and
    /// `to` for writing `len` ids, `len` at most 16.
    #[target_feature(enable = "avx512f,avx512vl")]
    #[inline]
    pub(super) unsafe fn sort_avx512(from: *const u32, to: *mut u32, len: usize) {
        debug_assert!(len <= 16);
        if len <= 8 {
            let present = ((1u32 << len) - 1) as __mmask8;
            // SAFETY: the masked load and store touch only the `len` ids.
            let lanes =
                unsafe { _mm256_mask_loadu_epi32(_mm256_set1_epi32(-1), present, from.cast()) };
            let lanes = network8(lanes);
            unsafe { _mm256_mask_storeu_epi32(to.cast(), present, lanes) };
        } else {
            let present = ((1u32 << len) - 1) as __mmask16;
            // SAFETY: as above.
            let lanes =
                unsafe { _mm512_mask_loadu_epi32(_mm512_set1_epi32(-1), present, from.cast()) };
            let lanes = network16(lanes);
            unsafe { _mm512_mask_storeu_epi32(to.cast(), present, lanes) };
        }
    }

    /// The 8-lane network's layers over one 256-bit register.
    #[target_feature(enable = "avx512f,avx512vl")]
    #[inline]
    fn network8(mut lanes: __m256i) -> __m256i {
        for layer in 0..LAYERS_8.high.len() {
            // SAFETY: reads the 8 lanes of a `[u32; 8]`.
            let partner =
                unsafe { _mm256_loadu_si256(LAYERS_8.partner[layer].as_ptr().cast::<__m256i>()) };
            let other = _mm256_permutexvar_epi32(partner, lanes);
            let low = _mm256_min_epu32(lanes, other);
            lanes = _mm256_mask_max_epu32(low, LAYERS_8.high[layer] as __mmask8, lanes, other);
        }
        lanes
    }

    /// The 16-lane network's layers over one 512-bit register.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn network16(mut lanes: __m512i) -> __m512i {
        for layer in 0..LAYERS_16.high.len() {
            // SAFETY: reads the 16 lanes of a `[u32; 16]`.
            let partner =
                unsafe { _mm512_loadu_si512(LAYERS_16.partner[layer].as_ptr().cast::<__m512i>()) };
            let other = _mm512_permutexvar_epi32(partner, lanes);
            let low = _mm512_min_epu32(lanes, other);
            lanes = _mm512_mask_max_epu32(low, LAYERS_16.high[layer] as __mmask16, lanes, other);
        }
        lanes
    }

    /// Sorts up to 8 ids in one 256-bit register, padded with `u32::MAX`.
    ///
    /// # Safety
    /// The processor must have AVX2, and `list` at most 8 ids.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sort8_avx2(list: &mut [u32]) {
        debug_assert!(list.len() <= 8);
        let present = _mm256_cmpgt_epi32(
            _mm256_set1_epi32(list.len() as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        );
        // SAFETY: the masked load and store touch only the list's `len` ids. Lanes past
        // them load as zero and are set to all ones by the OR.
        let loaded = unsafe { _mm256_maskload_epi32(list.as_ptr().cast::<i32>(), present) };
        let mut lanes = _mm256_or_si256(loaded, _mm256_xor_si256(present, _mm256_set1_epi32(-1)));
        for layer in 0..LAYERS_8.high.len() {
            // SAFETY: reads the 8 lanes of a `[u32; 8]`.
            let partner =
                unsafe { _mm256_loadu_si256(LAYERS_8.partner[layer].as_ptr().cast::<__m256i>()) };
            let high_lanes = _mm256_cmpgt_epi32(
                _mm256_and_si256(
                    _mm256_set1_epi32(LAYERS_8.high[layer] as i32),
                    _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128),
                ),
                _mm256_setzero_si256(),
            );
            let other = _mm256_permutevar8x32_epi32(lanes, partner);
            let low = _mm256_min_epu32(lanes, other);
            let high = _mm256_max_epu32(lanes, other);
            lanes = _mm256_blendv_epi8(low, high, high_lanes);
        }
        unsafe { _mm256_maskstore_epi32(list.as_mut_ptr().cast::<i32>(), present, lanes) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists of every length up to 40, with duplicates and the largest ids.
    fn lists() -> Vec<Vec<u32>> {
        let mut generator = crate::generate::Rng::new(0x2545_f491_4f6c_dd1du64);
        let mut lists = Vec::new();
        for len in 0..=40 {
            for round in 0..200 {
                // Small ranges give duplicates; the largest ids are there too.
                let range = [3u64, 50, 1 << 32][round % 3];
                lists.push(
                    (0..len)
                        .map(|_| ((generator.next_u64() % range) as u32).wrapping_sub(1))
                        .collect(),
                );
            }
        }
        lists
    }

    fn sorts_as_the_standard_sort(sort: impl Fn(&mut [u32]), max_len: usize) {
        for list in lists().into_iter().filter(|list| list.len() <= max_len) {
            let mut expected = list.clone();
            expected.sort();
            let mut sorted = list.clone();
            sort(&mut sorted);
            assert_eq!(sorted, expected, "{list:?}");
        }
    }

    #[test]
    fn lists_sort_as_the_standard_sort_does() {
        sorts_as_the_standard_sort(sort_list, usize::MAX);
    }

    #[test]
    fn the_scalar_network_sorts_as_the_standard_sort_does() {
        sorts_as_the_standard_sort(sort_short_scalar, 16);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_vector_networks_sort_as_the_standard_sort_does() {
        if x86::has_avx512() {
            // SAFETY: checked just above; the lists have at most 16 ids, sorted in place.
            sorts_as_the_standard_sort(
                |list| {
                    let (len, at) = (list.len(), list.as_mut_ptr());
                    unsafe { x86::sort_avx512(at, at, len) }
                },
                16,
            );
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: checked just above; the lists have at most 8 ids.
            sorts_as_the_standard_sort(|list| unsafe { x86::sort8_avx2(list) }, 8);
        }
    }

    /// Checks that `sort_into` writes every list of [`lists`], laid end to end, sorted.
    fn sorts_lists_as_the_standard_sort(sort_into: impl Fn(&[u32], &[u32], &mut [u32])) {
        let lists = lists();
        let concatenated: Vec<u32> = lists.concat();
        let lengths: Vec<u32> = lists.iter().map(|list| list.len() as u32).collect();
        let expected: Vec<u32> = lists
            .into_iter()
            .flat_map(|mut list| {
                list.sort();
                list
            })
            .collect();
        let mut sorted = vec![0; concatenated.len()];
        sort_into(&concatenated, &lengths, &mut sorted);
        assert_eq!(sorted, expected);
    }

    #[test]
    fn lists_laid_end_to_end_sort_as_the_standard_sort_does() {
        // The processor's own path (with AVX-512, the vector loop), and the one elsewhere.
        sorts_lists_as_the_standard_sort(sort_lists_into);
        sorts_lists_as_the_standard_sort(sort_lists_into_one_by_one);
    }

    #[test]
    fn every_layer_pairs_each_lane_at_most_once() {
        let check = |partner: &[u32], lanes: usize| {
            for (lane, &other) in partner.iter().enumerate() {
                assert!((other as usize) < lanes);
                assert_eq!(partner[other as usize] as usize, lane);
            }
        };
        for layer in layers::<16, 63, 10>(&NETWORK_16).partner {
            check(&layer, 16);
        }
        for layer in layers::<8, 19, 6>(&NETWORK_8).partner {
            check(&layer, 8);
        }
    }
}
