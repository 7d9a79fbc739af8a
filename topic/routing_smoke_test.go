package topic

import "testing"

func TestRoutingGoldenSmoke(t *testing.T) {
	cases := []struct {
		key  []byte
		want [3]int
	}{
		{[]byte("user-123"), [3]int{2, 4, 24}},
		{[]byte{}, [3]int{1, 1, 21}},
		{[]byte("orders"), [3]int{1, 1, 25}},
		{[]byte{0x00, 0xff}, [3]int{2, 4, 56}},
	}
	for _, c := range cases {
		for i, n := range []int{3, 7, 64} {
			if got := PartitionForKey(c.key, n); got != c.want[i] {
				t.Errorf("PartitionForKey(%q, %d) = %d, want %d", c.key, n, got, c.want[i])
			}
		}
	}
}
