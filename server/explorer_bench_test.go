package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
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
// record per request, 64 clients producing without pause for the whole
// run, a topic of 3 partitions on 3 brokers, replication factor 3) counted
// in one-second windows, alternately with five pages open and with none,
// in 30 pairs (ABBA order, so that a drift of the disk or the machine
// falls on both sides alike) after a warm-up that is not counted:
//
//	go test -run '^$' -bench 'BenchmarkExplorerProducePaired(Control|ControlOwnCore)?$' -benchtime 1x ./server
//	go test -run '^$' -bench 'BenchmarkExplorerProducePairedChromium' -benchtime 1x -timeout 30m ./server
//
// BenchmarkExplorerProducePaired's pages are five events-stream clients
// decoding every message as the page does; ...Chromium's are five tabs of
// a headless Chromium showing /explorer (skipped without a browser). The
// pages open before a "pages" window and close after it; the producers
// never stop, so no window holds their start or their drain. Each reports
// records/s of both sides, the median of the pairs' ratios (pages/none;
// the goal is at least 0.95) with its 95% confidence interval from the
// order statistics — the median, because the disk now and then halves
// throughput for a second or two, whichever side that falls on — the
// ratio of the totals, and the messages a page received per second in the
// windows.

const (
	benchPairs     = 30
	benchWindow    = time.Second
	benchSettle    = 300 * time.Millisecond
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
// PYSTREAM_CHROME) on /explorer during the "pages" windows, on about:blank
// during the others. It reports no messages: the pages count none.
// The browsers draw on the same cores as the server, so the ratio holds
// what drawing five pages costs the machine as well as what serving them
// costs the server (...ChromiumOwnCore parts the two).
func BenchmarkExplorerProducePairedChromium(b *testing.B) {
	benchChromium(b, nil)
}

// benchChromium runs the paired windows with five Chromium browsers as the
// pages. pin, when not nil, is called with each browser's process once it
// runs, and again after the pages open.
func benchChromium(b *testing.B, pin func(*os.Process)) {
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
	pinAll := func() {
		if pin != nil {
			for _, tab := range tabs {
				pin(chromedp.FromContext(tab).Browser.Process())
			}
		}
	}
	pinAll()
	var unused atomic.Bool
	open := false
	runPaired(b, base, func(on bool) {
		if on == open {
			return
		}
		open = on
		var wg sync.WaitGroup
		for _, tab := range tabs {
			wg.Go(func() {
				// Under the producers' load a page takes seconds to come up.
				ctx, cancel := context.WithTimeout(tab, time.Minute)
				defer cancel()
				if !on {
					if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
						b.Error(fmt.Errorf("leaving the explorer: %w", err))
					}
					return
				}
				live := `document.getElementById("conn")?.textContent.startsWith("live") && ` +
					`document.querySelectorAll("li[data-broker]").length === 3`
				if err := chromedp.Do(ctx, chromedp.Navigate(base+"/explorer")); err != nil {
					b.Error(fmt.Errorf("opening the explorer: %w", err))
					return
				}
				if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](live)); err != nil {
					b.Error(fmt.Errorf("the explorer page: %w", err))
				}
			})
		}
		wg.Wait()
		if on {
			pinAll() // a page may have brought a new process
		}
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

// runPaired runs the producers and counts the paired windows: pages(true)
// opens the pages before a "pages" window and pages(false) closes them
// after it (and is called after a "none" window too, so that both sides
// are alike but for the pages). A window is counted from benchSettle after
// its pages opened. While a window is counted, measuring is true; got,
// when not nil, counts the messages the pages received then.
func runPaired(b *testing.B, base string, pages func(on bool), measuring *atomic.Bool, got *atomic.Int64) {
	transport := &http.Transport{MaxIdleConnsPerHost: 2 * benchProducers, MaxConnsPerHost: 2 * benchProducers}
	b.Cleanup(transport.CloseIdleConnections)
	hc := &http.Client{Transport: transport}
	payload := bytes.Repeat([]byte("x"), 100)

	for b.Loop() {
		var written atomic.Int64
		ctx, stop := context.WithCancel(b.Context())
		var producers sync.WaitGroup
		for range benchProducers {
			producers.Go(func() {
				for ctx.Err() == nil {
					if !benchPost(b, hc, base+"/api/topics/bench/records", payload) {
						return
					}
					written.Add(1)
				}
			})
		}
		var pagesTime time.Duration // how long the "pages" windows were counted
		// window returns the records/s of one window.
		window := func(on bool) float64 {
			pages(on)
			time.Sleep(benchSettle) // the poller runs, the pages settle
			measuring.Store(true)
			from, start := written.Load(), time.Now()
			time.Sleep(benchWindow)
			took := time.Since(start)
			rate := float64(written.Load()-from) / took.Seconds()
			measuring.Store(false)
			if on {
				pagesTime += took
			}
			pages(false)
			return rate
		}

		var none, withPages float64
		ratios := make([]float64, 0, benchPairs)
		for i := -1; i < benchPairs; i++ { // pair -1 warms up and is not counted
			var r0, r5 float64
			if i%2 == 0 {
				r0 = window(false)
				r5 = window(true)
			} else {
				r5 = window(true)
				r0 = window(false)
			}
			if i < 0 {
				if got != nil {
					got.Store(0)
				}
				pagesTime = 0
				continue
			}
			none, withPages = none+r0, withPages+r5
			ratios = append(ratios, r5/max(r0, 1))
		}
		stop()
		producers.Wait()

		slices.Sort(ratios)
		lo, hi, ok := medianInterval(len(ratios))
		if !ok {
			b.Fatalf("no interval for the median of %d pairs", len(ratios))
		}
		b.ReportMetric(none/benchPairs, "none-records/s")
		b.ReportMetric(withPages/benchPairs, "pages-records/s")
		b.ReportMetric(withPages/none, "pages/none")
		b.ReportMetric((ratios[(len(ratios)-1)/2]+ratios[len(ratios)/2])/2, "median-pair-ratio")
		b.ReportMetric(ratios[lo], "ci95-low")
		b.ReportMetric(ratios[hi], "ci95-high")
		if got != nil {
			// Messages per page per second in the windows: at most ten
			// (docs/explorer.md § How it is served).
			b.ReportMetric(float64(got.Load())/pagesTime.Seconds()/benchPages, "messages/s/page")
		}
	}
}

// medianInterval returns the indexes, in n sorted values, of a confidence
// interval of at least 95% for their median, with no assumption about
// their distribution but that the values are independent: the median
// lies below the k-th smallest of n values with the chance that at least
// k of them fall below it, a binomial tail. ok is false when there is
// none: fewer than 6 values, or too many to count this way (over 1000).
func medianInterval(n int) (lo, hi int, ok bool) {
	if n > 1000 {
		return 0, 0, false
	}
	p := math.Pow(0.5, float64(n)) // P(X = 0) for X ~ Binomial(n, 1/2)
	below := 0.0                   // P(X < k)
	k := 0
	for ; k < n; k++ {
		if below+p > 0.025 {
			break
		}
		below += p
		p = p * float64(n-k) / float64(k+1)
	}
	// k is the largest with P(X < k) <= 2.5%: the median lies below the
	// k-th smallest value (index k-1) with at most that chance, and above
	// the k-th largest with the same, by symmetry.
	if k == 0 {
		return 0, 0, false
	}
	return k - 1, n - k, true
}

func TestMedianInterval(t *testing.T) {
	// Binomial(30, 1/2): P(X <= 9) = 0.021, P(X <= 10) = 0.049; of 30
	// sorted values the 10th smallest and the 10th largest bound the
	// median with 95.7%. Binomial(10, 1/2): P(X <= 1) = 0.011, P(X <= 2)
	// = 0.055, so the 2nd and the 9th. Binomial(6, 1/2): P(X = 0) =
	// 0.016, the smallest and the largest; with 5, P(X = 0) = 0.031 is
	// already too much.
	for _, c := range []struct {
		n, lo, hi int
		ok        bool
	}{{30, 9, 20, true}, {10, 1, 8, true}, {6, 0, 5, true}, {5, 0, 0, false}, {1001, 0, 0, false}} {
		if lo, hi, ok := medianInterval(c.n); lo != c.lo || hi != c.hi || ok != c.ok {
			t.Errorf("medianInterval(%d) = %d, %d, %v; want %d, %d, %v", c.n, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
}
