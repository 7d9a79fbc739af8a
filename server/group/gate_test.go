package group

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// checkClassic and checkConsumer are CheckCommit for a commit that
// stores nothing: it leaves the gate at once.
func checkClassic(c *ClassicCoordinator, group string, generation int32, ref MemberRef) error {
	done, err := c.CheckCommit(group, generation, ref)
	done()
	return err
}

func checkConsumer(c *ConsumerCoordinator, group, memberID string, epoch int32, topicName string, partition int32) error {
	done, err := c.CheckCommit(group, memberID, epoch, topicName, partition)
	done()
	return err
}

// A fenced member's commit never lands after the fence: a commit checked
// before a fence holds the group's gate until its offset is stored, and
// the fence — here a second member joining, which revokes partitions from
// the first and moves its epoch — is answered to no one until then.
// After the fence the first member's commit at its old epoch is refused.
// Time and blocking are synctest's: the fence is seen waiting, not
// guessed at.
func TestConsumerCommitRacingFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCoordinator(t)
		m1 := settle(t, c, join(t, c, "orders"))[0]
		done, err := c.CheckCommit("g", m1.MemberID, m1.MemberEpoch, "orders", 3)
		require.NoError(t, err)

		fenced := make(chan Assignment, 1)
		go func() { fenced <- join(t, c, "orders") }()
		synctest.Wait()
		select {
		case <-fenced:
			t.Fatal("the fence was answered while a commit it fences was being stored")
		default:
		}
		done() // the offset is stored
		m2 := <-fenced
		require.Greater(t, m2.MemberEpoch, m1.MemberEpoch)

		next := beat(t, c, m1, m1.Partitions...)
		require.Greater(t, next.MemberEpoch, m1.MemberEpoch, "partitions were revoked: a new epoch")
		memberErr(t, checkConsumer(c, "g", m1.MemberID, m1.MemberEpoch, "orders", 3), ErrFencedMemberEpoch)
	})
}

// The classic protocol's fence: a new generation. A commit of the
// current generation, checked while the group is preparing a rebalance,
// holds the join's completion until its offset is stored; afterwards the
// old generation is refused.
func TestClassicCommitRacingFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		a, b := f.stableTwo(t)
		bLeft, err := f.c.Leave("g", []MemberRef{{MemberID: b.MemberID}})
		require.NoError(t, err)
		require.NoError(t, bLeft[0])
		done, err := f.c.CheckCommit("g", a.Generation, MemberRef{MemberID: a.MemberID})
		require.NoError(t, err, "preparing a rebalance: the current generation still commits")

		aJoin := f.join(joinReq(a.MemberID)) // completes the join: a new generation
		synctest.Wait()
		select {
		case <-aJoin:
			t.Fatal("the new generation was answered while a commit of the old one was being stored")
		default:
		}
		done()
		a2 := <-aJoin
		require.NoError(t, a2.err)
		require.Equal(t, a.Generation+1, a2.res.Generation)
		require.ErrorIs(t, checkClassic(f.c, "g", a.Generation, MemberRef{MemberID: a.MemberID}), ErrIllegalGeneration)
	})
}
