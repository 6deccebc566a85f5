package drift

// Line alignment: Myers' O(ND) difference algorithm over line hashes.

type editOp byte

const (
	opEqual editOp = iota
	opDelete
	opInsert
)

// align returns an edit script turning a into b. When the two differ by more
// than maxEditDistance edits, it gives up on alignment and pairs the lines
// position by position instead.
func align(a, b []uint64) []editOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return fill(nil, n, m)
	}
	maxD := min(n+m, maxEditDistance)
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	var trace [][]int32
	for d := 0; d <= maxD; d++ {
		// Keep only the diagonals reachable with d edits.
		snap := make([]int32, 2*d+3)
		copy(snap, v[off-d-1:off+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				return backtrack(trace, d, n, m)
			}
		}
	}
	return fill(nil, n, m)
}

// backtrack rebuilds the script from the diagonals saved before each step.
func backtrack(trace [][]int32, d, n, m int) []editOp {
	var rev []editOp
	x, y := n, m
	for ; d > 0; d-- {
		v := trace[d] // state before step d, diagonals -d-1..d+1
		at := func(k int) int { return int(v[k+d+1]) }
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, opEqual)
			x, y = x-1, y-1
		}
		if prevK == k+1 {
			rev = append(rev, opInsert)
		} else {
			rev = append(rev, opDelete)
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		rev = append(rev, opEqual)
		x, y = x-1, y-1
	}
	out := make([]editOp, len(rev))
	for i, op := range rev {
		out[len(rev)-1-i] = op
	}
	return out
}

// fill is the script without alignment: deletions then insertions.
func fill(s []editOp, n, m int) []editOp {
	for range n {
		s = append(s, opDelete)
	}
	for range m {
		s = append(s, opInsert)
	}
	return s
}
