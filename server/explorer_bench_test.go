package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pystream/pystream/server/apiclient"
)

// What open explorer pages cost producers: durable produce (one 100-byte
// record per request, 64 concurrent clients, a topic of 3 partitions on 3
// brokers, replication factor 3) with five pages open against none, in
// alternating pairs of two-second slices of one run (ABBA order, so that
// a drift of the disk or the machine falls on both sides alike), after a
// warm-up pair that is not counted:
//
//	go test -run '^$' -bench 'BenchmarkExplorerProducePaired' -benchtime 1x ./server
//
// BenchmarkExplorerProducePaired's pages are five events-stream clients
// decoding every message as the page does; ...Chromium's are five tabs of
// a headless Chromium showing /explorer (skipped without a browser). The
// pages stay connected for the whole of each "pages" slice; between
// slices both sides pause alike. Each reports records/s of both sides,
// the median of the pairs' ratios (pages/none; the goal is at least 0.95)
// with its quartiles, which a burst of another program's load moves less
// than the ratio of the totals (also reported), and the messages a page
// received per second while the producers ran.

const (
	benchPairs     = 10
	benchSlice     = 2 * time.Second
	benchProducers = 64
	benchPages     = 5
)

// BenchmarkExplorerProducePairedControl is the same run with no page on
// either side: its ratios are the noise floor of this machine, against
// which BenchmarkExplorerProducePaired's are read.
func BenchmarkExplorerProducePairedControl(b *testing.B) {
	var measuring atomic.Bool
	runPaired(b, explorerBenchServer(b), func(bool) {}, &measuring, nil)
}

func BenchmarkExplorerProducePaired(b *testing.B) {
	base := explorerBenchServer(b)
	var measuring atomic.Bool
	var got atomic.Int64
	c := apiclient.New(base)
	var pcancel context.CancelFunc
	var wg sync.WaitGroup
	runPaired(b, base, func(on bool) {
		if !on {
			if pcancel != nil {
				pcancel()
				wg.Wait()
				pcancel = nil
			}
			return
		}
		var pctx context.Context
		pctx, pcancel = context.WithCancel(b.Context())
		var first sync.WaitGroup
		for range benchPages {
			first.Add(1)
			var once sync.Once
			wg.Go(func() {
				_, _ = c.Events(pctx, apiclient.EventsOptions{}, func(apiclient.Update) error {
					once.Do(first.Done)
					if measuring.Load() {
						got.Add(1)
					}
					return nil
				})
				once.Do(first.Done) // a stream that failed before its first message
			})
		}
		first.Wait() // every page has its first message, the whole state
	}, &measuring, &got)
}

// BenchmarkExplorerProducePairedChromium is the same with five real pages:
// five headless Chromium browsers (the system's chromium, or
// PYSTREAM_CHROME) on /explorer during the "pages" slices, on about:blank
// during the others. Messages are counted by the server's side: the state reads of
// the one poller are the same, so it reports none.
func BenchmarkExplorerProducePairedChromium(b *testing.B) {
	bin := os.Getenv("PYSTREAM_CHROME")
	if bin == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		b.Skip("no Chromium found: install one (apt-get install chromium) or name a Chrome binary in PYSTREAM_CHROME")
	}
	base := explorerBenchServer(b)
	// One browser per page: the pages of one browser would share its six
	// connections to the server, five of them held by the streams.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800), chromedp.Flag("disable-gpu", true))
	tabs := make([]context.Context, benchPages)
	for i := range tabs {
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		tab, cancelTab := chromedp.NewContext(actx)
		b.Cleanup(func() { cancelTab(); cancelAlloc() })
		if err := chromedp.Do(tab); err != nil {
			b.Fatal(err)
		}
		tabs[i] = tab
	}
	var unused atomic.Bool
	runPaired(b, base, func(on bool) {
		var wg sync.WaitGroup
		for _, tab := range tabs {
			wg.Go(func() {
				url, live := "about:blank", "true"
				if on {
					url, live = base+"/explorer", `document.getElementById("conn")?.textContent.startsWith("live") && `+
						`document.querySelectorAll("li[data-broker]").length === 3`
				}
				ctx, cancel := context.WithTimeout(tab, 30*time.Second)
				defer cancel()
				if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
					b.Error(err)
					return
				}
				if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](live)); err != nil {
					b.Error(fmt.Errorf("the page at %s: %w", url, err))
				}
			})
		}
		wg.Wait()
	}, &unused, nil)
}

// explorerBenchServer serves three brokers with the topic bench (3 partitions,
// replication factor 3) on a loopback port until the benchmark ends.
func explorerBenchServer(b *testing.B) string {
	cfg := Defaults()
	cfg.DataDir, cfg.Brokers, cfg.KafkaPort = b.TempDir(), 3, 0
	s, err := New(cfg, NewLogger(io.Discard, cfg))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Cluster().CreateTopic("bench", 3, 3); err != nil {
		b.Fatal(err)
	}
	return serveBench(b, s)
}

// runPaired runs the paired slices: pages(true) opens the pages before a
// "pages" slice and pages(false) closes them after it (and is called
// before a "none" slice too, so that both sides pause alike). While the
// producers run, measuring is true; got, when not nil, counts the
// messages the pages received then.
func runPaired(b *testing.B, base string, pages func(on bool), measuring *atomic.Bool, got *atomic.Int64) {
	transport := &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128}
	b.Cleanup(transport.CloseIdleConnections)
	hc := &http.Client{Transport: transport}
	payload := bytes.Repeat([]byte("x"), 100)

	// produceFor runs the producers for d and returns the records written
	// and how long they ran.
	produceFor := func(d time.Duration) (int64, time.Duration) {
		var n atomic.Int64
		start := time.Now()
		stop := start.Add(d)
		var wg sync.WaitGroup
		for range benchProducers {
			wg.Go(func() {
				for time.Now().Before(stop) {
					if !benchPost(b, hc, base+"/api/topics/bench/records", payload) {
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		return n.Load(), time.Since(start)
	}
	slice := func(on bool) (records int64, took time.Duration) {
		pages(on)
		time.Sleep(200 * time.Millisecond) // the poller runs, the pages settle
		measuring.Store(true)
		records, took = produceFor(benchSlice)
		measuring.Store(false)
		pages(false)
		return records, took
	}

	for b.Loop() {
		var none, withPages int64
		var noneTime, pagesTime time.Duration
		ratios := make([]float64, 0, benchPairs)
		if got != nil {
			got.Store(0)
		}
		for i := -1; i < benchPairs; i++ { // pair -1 warms up and is not counted
			var n0, n5 int64
			var t0, t5 time.Duration
			if i%2 == 0 {
				n0, t0 = slice(false)
				n5, t5 = slice(true)
			} else {
				n5, t5 = slice(true)
				n0, t0 = slice(false)
			}
			if i < 0 {
				if got != nil {
					got.Store(0)
				}
				continue
			}
			none, withPages, noneTime, pagesTime = none+n0, withPages+n5, noneTime+t0, pagesTime+t5
			ratios = append(ratios, (float64(n5)/t5.Seconds())/(float64(max(n0, 1))/t0.Seconds()))
		}
		slices.Sort(ratios)
		quantile := func(q float64) float64 {
			x := q * float64(len(ratios)-1)
			i := int(x)
			if i+1 >= len(ratios) {
				return ratios[i]
			}
			return ratios[i] + (x-float64(i))*(ratios[i+1]-ratios[i])
		}
		b.ReportMetric(float64(none)/noneTime.Seconds(), "none-records/s")
		b.ReportMetric(float64(withPages)/pagesTime.Seconds(), "pages-records/s")
		b.ReportMetric((float64(withPages)/pagesTime.Seconds())/(float64(none)/noneTime.Seconds()), "pages/none")
		b.ReportMetric(quantile(0.5), "median-pair-ratio")
		b.ReportMetric(quantile(0.25), "p25-pair-ratio")
		b.ReportMetric(quantile(0.75), "p75-pair-ratio")
		if got != nil {
			// Messages per page per second while the producers ran: at
			// most ten (docs/explorer.md § How it is served).
			b.ReportMetric(float64(got.Load())/pagesTime.Seconds()/benchPages, "messages/s/page")
		}
	}
}
