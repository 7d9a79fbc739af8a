package server

import (
	"context"
	"fmt"
	"time"
)

// startRetention runs the backend's retention pass every interval until
// Close: the leaders delete the segments their topics' retention.ms and
// retention.bytes let go, and journal what they deleted. A pass that fails
// for a partition is logged and tried again at the next interval.
func (s *Server) startRetention(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			res, err := s.cluster.EnforceRetention()
			for _, r := range res {
				s.logger.Info("retention deleted old segments", "partition", fmt.Sprintf("%s/%d", r.Topic, r.Partition),
					"log_start_from", r.From, "log_start_to", r.To, "segments", len(r.Removed))
			}
			if err != nil {
				s.logger.Warn("a retention pass did not finish; it is tried again at the next interval", "err", err)
			}
		}
	}()
	s.stopRetention = func() {
		cancel()
		<-done
	}
}
