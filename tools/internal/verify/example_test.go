package verify_test

import (
	"fmt"
	"slices"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/tools/internal/verify"
)

func ExampleJudge() {
	leader := []log.Record{
		{Offset: 0, Timestamp: 10, Payload: []byte("a")},
		{Offset: 1, Timestamp: 11, Payload: []byte("b")},
		{Offset: 2, Timestamp: 12, Payload: []byte("c")},
	}
	behind := leader[:1]
	changed := []log.Record{leader[0], {Offset: 1, Timestamp: 11, Payload: []byte("B")}}

	for _, follower := range [][]log.Record{leader, behind, changed} {
		c := verify.Compare(verify.Replica{Records: slices.Values(leader)}, verify.Replica{Records: slices.Values(follower)})
		status, _, detail := verify.Judge(c, 1, true)
		fmt.Println(status, "-", detail)
	}
	// Output:
	// OK - in sync with leader broker 1 (end 3)
	// LAG - 2 records behind leader broker 1 (end 1, leader's end 3)
	// DIVERGED - payload of offset 1 differs from leader broker 1
}
