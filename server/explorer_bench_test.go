package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pystream/pystream/server/apiclient"
)

// BenchmarkExplorerProducePaired measures what open explorer pages cost
// producers: durable produce (one 100-byte record per request, 64
// concurrent clients, a topic of 3 partitions on 3 brokers, replication
// factor 3) with five events-stream clients connected, each decoding
// every message as the page does, against none — in 40 alternating pairs of
// quarter-second slices of one run (ABBA order, so that a drift of the disk or the machine falls
// on both sides alike):
//
//	go test -run '^$' -bench BenchmarkExplorerProducePaired -benchtime 1x ./server
//
// It reports records/s of each side and their ratio, pages/none (the goal
// is at least 0.95), and the median of the pairs' ratios, which a burst of
// another program's load on the machine moves less. Both sides pause and
// connect (none or five clients) alike before each slice.
func BenchmarkExplorerProducePaired(b *testing.B) {
	const (
		pairs     = 40
		slice     = 250 * time.Millisecond
		producers = 64
		pages     = 5
	)
	cfg := Defaults()
	cfg.DataDir, cfg.Brokers, cfg.KafkaPort = b.TempDir(), 3, 0
	s, err := New(cfg, NewLogger(io.Discard, cfg))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Cluster().CreateTopic("bench", 3, 3); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	b.Cleanup(func() {
		cancel()
		<-served
		_ = s.Close()
	})
	base := "http://" + ln.Addr().String()
	transport := &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128}
	b.Cleanup(transport.CloseIdleConnections)
	hc := &http.Client{Transport: transport}
	payload := bytes.Repeat([]byte("x"), 100)

	// produceFor runs the producers for d and returns the records written.
	produceFor := func(d time.Duration) int64 {
		var n atomic.Int64
		stop := time.Now().Add(d)
		var wg sync.WaitGroup
		for range producers {
			wg.Go(func() {
				for time.Now().Before(stop) {
					resp, err := hc.Post(base+"/api/topics/bench/records", "application/octet-stream", bytes.NewReader(payload))
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		return n.Load()
	}
	// withPages runs f with n events-stream clients connected, after the
	// same pause for either side.
	withPages := func(n int, f func()) (messages int64) {
		pctx, pcancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var got atomic.Int64
		c := apiclient.New(base)
		for range n {
			wg.Go(func() {
				_, _ = c.Events(pctx, apiclient.EventsOptions{}, func(apiclient.Update) error { got.Add(1); return nil })
			})
		}
		for s.explorer.Clients() < n {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // the poller runs
		f()
		pcancel()
		wg.Wait()
		return got.Load()
	}

	for b.Loop() {
		var none, withFive, msgs int64
		ratios := make([]float64, 0, pairs)
		for i := range pairs {
			var n0, n5 int64
			a := func() { withPages(0, func() { n0 = produceFor(slice) }) }
			p := func() { msgs += withPages(pages, func() { n5 = produceFor(slice) }) }
			if i%2 == 0 {
				a()
				p()
			} else {
				p()
				a()
			}
			none, withFive = none+n0, withFive+n5
			ratios = append(ratios, float64(n5)/float64(max(n0, 1)))
		}
		slices.Sort(ratios)
		secs := (pairs * slice).Seconds()
		b.ReportMetric(float64(none)/secs, "none-records/s")
		b.ReportMetric(float64(withFive)/secs, "pages-records/s")
		b.ReportMetric(float64(withFive)/float64(none), "pages/none")
		b.ReportMetric((ratios[pairs/2-1]+ratios[pairs/2])/2, "median-pair-ratio")
		b.ReportMetric(float64(msgs)/secs/pages, "messages/s/page")
	}
}
