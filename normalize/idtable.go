package normalize

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unsafe"
)

// idTable numbers the identifiers of a recording: each canonical value gets
// a kind and a number, its placeholder <KIND-N>, for the whole recording.
// It is the one part of a Normalizer that grows with the input, so it is
// compact: a uuid (most ids are) is kept as its 16 bytes and its ref, 24
// bytes, in chunks that never move, found through an open-address index of
// 4-byte slots; other ids go to a map. Growing it copies the index only.
type idTable struct {
	kinds  []string     // kind of each index
	chunks [][]uuidSlot // the uuids in order of arrival, idChunk a chunk
	nUUIDs int
	index  []uint32 // 1 + position in chunks, 0 for none; a power of two long
	other  map[string]idRef
	ph     []byte // the last placeholder written
}

const idChunk = 1 << 14

type idRef struct {
	num  uint32 // from 1
	kind uint8
}

type uuidSlot struct {
	key [16]byte
	idRef
}

func (t *idTable) entry(pos uint32) *uuidSlot { return &t.chunks[pos/idChunk][pos%idChunk] }

// find returns the ref of canon, or nil; key and isUUID say how it is kept.
// A uuid's ref points into the table; another id's is a copy (setOther).
func (t *idTable) find(canon []byte) (ref *idRef, key [16]byte, isUUID bool) {
	key, isUUID = uuidKey(canon)
	if !isUUID {
		if r, ok := t.other[string(canon)]; ok {
			return &r, key, false
		}
		return nil, key, false
	}
	if t.index == nil {
		return nil, key, true
	}
	mask := uint64(len(t.index) - 1)
	for i := uuidHash(key) & mask; t.index[i] != 0; i = (i + 1) & mask {
		if e := t.entry(t.index[i] - 1); e.key == key {
			return &e.idRef, key, true
		}
	}
	return nil, key, true
}

// setOther records the ref of an id that is not a uuid.
func (t *idTable) setOther(canon []byte, ref idRef) {
	if t.other == nil {
		t.other = map[string]idRef{}
	}
	t.other[string(canon)] = ref
}

// addUUID records a uuid that find did not find.
func (t *idTable) addUUID(key [16]byte, ref idRef) {
	if (t.nUUIDs+1)*4 > len(t.index)*3 { // at most 3/4 full
		t.grow()
	}
	pos := uint32(t.nUUIDs)
	switch {
	case pos < idChunk: // the first chunk grows as a slice: a short run's ids cost little
		if len(t.chunks) == 0 {
			t.chunks = append(t.chunks, nil)
		}
		t.chunks[0] = append(t.chunks[0], uuidSlot{})
	case pos%idChunk == 0:
		t.chunks = append(t.chunks, make([]uuidSlot, idChunk))
	}
	*t.entry(pos) = uuidSlot{key: key, idRef: ref}
	t.nUUIDs++
	t.insert(key, pos)
}

func (t *idTable) insert(key [16]byte, pos uint32) {
	mask := uint64(len(t.index) - 1)
	i := uuidHash(key) & mask
	for t.index[i] != 0 {
		i = (i + 1) & mask
	}
	t.index[i] = pos + 1
}

func (t *idTable) grow() {
	t.index = make([]uint32, max(64, 2*len(t.index)))
	for pos := range uint32(t.nUUIDs) {
		t.insert(t.entry(pos).key, pos)
	}
}

// reset empties the table and keeps its memory, for the next piece of a run
// (see pieces.go): a piece's ids are few, so its first chunk and index stay
// small.
func (t *idTable) reset() {
	t.kinds = t.kinds[:0]
	if len(t.chunks) > 0 {
		t.chunks = t.chunks[:1]
		t.chunks[0] = t.chunks[0][:0]
	}
	t.nUUIDs = 0
	clear(t.index)
	clear(t.other)
}

// kindIndex returns the index of kind, adding it when new.
func (t *idTable) kindIndex(kind string) uint8 {
	for i, k := range t.kinds {
		if k == kind {
			return uint8(i)
		}
	}
	t.kinds = append(t.kinds, kind)
	return uint8(len(t.kinds) - 1)
}

// placeholder writes <KIND-N> and returns it. The string shares the table's
// buffer: it is valid until the next call, and every caller copies it
// out at once (a string per id would be most of the table's memory).
func (t *idTable) placeholder(ref idRef) string {
	t.ph = append(t.ph[:0], '<')
	t.ph = append(t.ph, t.kinds[ref.kind]...)
	t.ph = append(t.ph, '-')
	t.ph = strconv.AppendUint(t.ph, uint64(ref.num), 10)
	t.ph = append(t.ph, '>')
	return unsafe.String(unsafe.SliceData(t.ph), len(t.ph))
}

// uuidKey returns the 16 bytes of a canonical (lower-case) uuid.
func uuidKey(s []byte) (key [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return key, false
	}
	k := 0
	for i := 0; i < 36; i += 2 {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i--
			continue
		}
		hi, lo := lowerHex(s[i]), lowerHex(s[i+1])
		if hi > 15 || lo > 15 {
			return key, false
		}
		key[k] = hi<<4 | lo
		k++
	}
	return key, k == 16
}

// lowerHex is the value of a lower-case hex digit, or 255.
func lowerHex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return 255
}

// uuidHash mixes both halves: time-ordered uuids (v7) share their first bytes.
func uuidHash(k [16]byte) uint64 {
	lo, hi := binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:])
	return (lo ^ bits.RotateLeft64(hi, 32)) * 0x9E3779B97F4A7C15 >> 7
}
