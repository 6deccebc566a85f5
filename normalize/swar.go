package normalize

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Eight bytes at a time: the scans below look at a machine word per step
// instead of a byte, which is what lets the JSON walk keep up with a bare
// search for quotes.

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	lows  = 0x7f7f7f7f7f7f7f7f
)

// zeroBytes has the high bit set in the lowest byte of x that is zero (and
// maybe in higher ones): exact for the first zero byte, which is all the
// callers use.
func zeroBytes(x uint64) uint64 { return (x - ones) &^ x & highs }

// stringStopWord marks the bytes of w that end the plain run of a JSON
// string: a quote, a backslash or a newline.
func stringStopWord(w uint64) uint64 {
	return zeroBytes(w^('"'*ones)) | zeroBytes(w^('\\'*ones)) | zeroBytes(w^('\n'*ones))
}

// stringStopIn returns the index of the first quote, backslash or newline
// in s, or len(s) when there is none, looking at no more than max bytes
// (rounded up to a word): long runs are left to bytes.IndexByte.
func stringStopIn(s []byte, max int) int {
	i := 0
	for ; i+8 <= len(s) && i < max; i += 8 {
		if m := stringStopWord(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s) && i < max+8; i++ {
		if stringStop[s[i]] {
			return i
		}
	}
	return i
}

// shortKey identifies a string of at most 15 bytes by two words: the first
// eight bytes (0 for a shorter string), then the rest with the total length
// + 1 in the top byte. Equal keys, equal strings, in two compares.
type shortKey struct{ a, b uint64 }

// maxShort is the longest string a shortKey holds.
const maxShort = 15

// shortKeyOf returns the key of v, which has at most maxShort bytes.
func shortKeyOf(v []byte) shortKey {
	var k shortKey
	rest := v
	if len(v) >= 8 {
		k.a, rest = binary.LittleEndian.Uint64(v), v[8:]
	}
	for i, c := range rest {
		k.b |= uint64(c) << (8 * i)
	}
	k.b |= uint64(len(v)+1) << 56
	return k
}

// shortKeyAt is shortKeyOf(buf[j:j+l]), 0 < l <= maxShort, read as two
// words where buf holds 16 bytes at j.
func shortKeyAt(buf []byte, j, l int) shortKey {
	if j < 0 || j+16 > len(buf) {
		return shortKeyOf(buf[j : j+l])
	}
	// Checked above: the two words are in buf.
	at := (*[16]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), j))
	a, b := binary.LittleEndian.Uint64(at[:8]), binary.LittleEndian.Uint64(at[8:])
	rest := l - 8 // bytes in b
	if l < 8 {
		a, b, rest = 0, a, l
	}
	return shortKey{a: a, b: b&(1<<(uint(8*rest)&63)-1) | uint64(l+1)<<56}
}

// lowerInPlace turns the ASCII capitals of s to lower case, eight bytes a
// step.
func lowerInPlace(s []byte) {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		// The high bit of each byte from 'A' to 'Z' (exact in every byte:
		// no carry leaves one), not of bytes from 0x80.
		h := w & lows
		upper := (h + (0x80-'A')*ones) &^ (h + (0x80-'Z'-1)*ones) &^ w & highs
		binary.LittleEndian.PutUint64(s[i:], w|upper>>2)
	}
	for ; i < len(s); i++ {
		s[i] = lowerASCII(s[i])
	}
}

// slot is the index of k in a direct-mapped cache of 2^bits entries.
func (k shortKey) slot(bits uint) uint64 {
	return (k.a*0xFF51AFD7ED558CCD ^ k.b) * 0x9E3779B97F4A7C15 >> (64 - bits)
}

// shortHash mixes the first and last eight bytes of v and its length: the
// slot of v in the direct-mapped id cache, whose keys (uuids, call ids)
// often differ in a few bytes only.
func shortHash(v []byte) uint64 {
	var a, b uint64
	if len(v) >= 8 {
		a = binary.LittleEndian.Uint64(v)
		b = binary.LittleEndian.Uint64(v[len(v)-8:])
	} else {
		a = shortKeyOf(v).b
	}
	return (a ^ bits.RotateLeft64(b*0x9E3779B97F4A7C15, 29) ^ uint64(len(v))) * 0xFF51AFD7ED558CCD
}

// lastNewline is bytes.LastIndexByte(s, '\n') a word at a time (that one
// goes byte by byte): the cut of a piece walks back over many lines.
func lastNewline(s []byte) int {
	i := len(s)
	// Two words a step: lines are a hundred bytes and more.
	for ; i >= 16; i -= 16 {
		x := binary.LittleEndian.Uint64(s[i-8:]) ^ '\n'*ones
		y := binary.LittleEndian.Uint64(s[i-16:]) ^ '\n'*ones
		mx := ((x&lows + lows) | x | lows) ^ ^uint64(0)
		my := ((y&lows + lows) | y | lows) ^ ^uint64(0)
		if mx|my != 0 {
			if mx != 0 {
				return i - 8 + (63-bits.LeadingZeros64(mx))>>3
			}
			return i - 16 + (63-bits.LeadingZeros64(my))>>3
		}
	}
	for ; i >= 8; i -= 8 {
		w := binary.LittleEndian.Uint64(s[i-8:])
		// Exact in every byte: no borrow from a lower byte that is zero.
		x := w ^ '\n'*ones
		if m := ((x&lows + lows) | x | lows) ^ ^uint64(0); m != 0 {
			return i - 8 + (63-bits.LeadingZeros64(m))>>3
		}
	}
	for i--; i >= 0; i-- {
		if s[i] == '\n' {
			return i
		}
	}
	return -1
}

// indexNeedle is bytes.Index(s, nd) for a rule's needle. A needle is a
// word and its closing quote, and the words of events (thinking, delta,
// assistant) start with letters that text is full of, where bytes.Index
// stops at every first letter: this looks at eight places a step for the
// first byte and the last (a quote) at once, and compares only there.
func indexNeedle(s, nd []byte) int {
	n := len(nd)
	if n < 2 {
		return bytes.Index(s, nd)
	}
	first, last := uint64(nd[0])*ones, uint64(nd[n-1])*ones
	i := 0
	for ; i+n-1+8 <= len(s); i += 8 {
		a := binary.LittleEndian.Uint64(s[i:]) ^ first
		b := binary.LittleEndian.Uint64(s[i+n-1:]) ^ last
		// Exact in every byte (no borrow from a lower zero byte): the
		// high bit of each byte where both matched.
		m := ^((a&lows + lows) | a | lows) & ^((b&lows + lows) | b | lows)
		for m != 0 {
			j := i + bits.TrailingZeros64(m)>>3
			if string(s[j+1:j+n-1]) == string(nd[1:n-1]) {
				return j
			}
			m &= m - 1
		}
	}
	if k := bytes.Index(s[i:], nd); k >= 0 {
		return i + k
	}
	return -1
}
