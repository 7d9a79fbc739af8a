package explorer_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/docs"
	"github.com/pystream/pystream/server"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// The explorer in a real browser: headless Chromium drives /explorer on a
// real server listening on a loopback port. Each test saves a screenshot in
// its temporary directory and logs the path. Without a browser they skip.
// They live in this external test package, beside the package they test,
// so that their test binary runs beside the server package's.

// running is a server serving on a loopback port, with a client of it.
type running struct {
	srv    *server.Server
	base   string
	client *apiclient.Client
	stop   func()
}

// config is the tests' server configuration: brokers logical brokers
// under dir, no Kafka port, errors only in the log.
func config(dir string, brokers int, opts ...func(*server.Config)) server.Config {
	cfg := server.Defaults()
	cfg.DataDir, cfg.Brokers, cfg.KafkaPort = dir, server.BrokerCount(brokers), 0
	cfg.LogLevel = server.LogLevel(server.LevelError)
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// serveAt builds a server from cfg and serves it at addr ("127.0.0.1:0":
// a free port) until the test ends or stop is called.
func serveAt(t *testing.T, cfg server.Config, addr string) *running {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	return serveOn(t, cfg, ln)
}

// serveOn builds a server from cfg and serves it on ln until the test
// ends or stop is called.
func serveOn(t *testing.T, cfg server.Config, ln net.Listener) *running {
	t.Helper()
	srv, err := server.New(cfg, server.NewLogger(io.Discard, cfg))
	if err != nil {
		_ = ln.Close()
	}
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	r := &running{srv: srv, base: base, client: apiclient.New(base)}
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-served)
			require.NoError(t, srv.Close())
		})
	}
	t.Cleanup(r.stop)
	return r
}

// manual is phase 5's manual mode (PYSTREAM_FAILOVER_AFTER=0).
func manual(c *server.Config) { c.FailoverAfter = 0 }

// Tokens of withAuth's file.
const (
	tokenRead  = "read-secret-0123456789abcdef"
	tokenWrite = "write-secret-0123456789abcdef"
)

// withAuth gives the server an auth file with a read and a write token.
func withAuth(t *testing.T) func(*server.Config) {
	path := filepath.Join(t.TempDir(), "tokens")
	content := "reader read " + auth.HashToken(tokenRead) + "\nwriter write " + auth.HashToken(tokenWrite) + "\n"
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return func(c *server.Config) { c.AuthFile = path }
}

// chromeBinary finds the browser: PYSTREAM_CHROME, else chromium on PATH.
func chromeBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PYSTREAM_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium found: install one (apt-get install chromium) or name a Chrome binary in PYSTREAM_CHROME")
	return ""
}

// startBrowser starts a headless browser at 1280x800 for the test and
// its subtests; it closes with the test.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromeBinary(t)),
		chromedp.NoSandbox, chromedp.WindowSize(1280, 800), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	require.NoError(t, chromedp.Do(ctx)) // start it now
	return ctx
}

// browserTab opens a tab of browser for one test, and collects what the
// page logs as an error (an exception, a refused script or style: the
// CSP). The tab closes with the test.
func browserTab(t *testing.T, browser context.Context) (context.Context, func() []string) {
	t.Helper()
	ctx, cancelTab := chromedp.NewContext(browser)
	ctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTime(); cancelTab() })
	require.NoError(t, chromedp.Do(ctx)) // open it now

	var mu sync.Mutex
	var problems []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !strings.Contains(m.Text, "Failed to load resource") {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// screenshot saves the whole page as name.png under the test's temporary
// directory, or under PYSTREAM_SCREENSHOT_DIR to keep it.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	dir := os.Getenv("PYSTREAM_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}

// waitJS waits until the JavaScript expression is true.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(15*time.Second)))
	require.NoError(t, err, "waiting for %s (%s)", what, expr)
}

// explorerServer starts a server with three brokers and the topic orders
// (one partition, three replicas) and opens the explorer in a tab of
// browser.
func explorerServer(t *testing.T, browser context.Context, opts ...func(*server.Config)) (*running, context.Context, func() []string) {
	t.Helper()
	r := serveAt(t, config(t.TempDir(), 3, opts...), "127.0.0.1:0")
	require.NoError(t, r.srv.Cluster().CreateTopic("orders", 1, 3))
	ctx, problems := browserTab(t, browser)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(r.base+"/explorer")))
	return r, ctx, problems
}

// TestExplorerBrowser runs the page's tests in one browser, a tab each.
func TestExplorerBrowser(t *testing.T) {
	browser := startBrowser(t)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, context.Context)
	}{
		{"ShowsBrokersAndReplicas", browserShowsBrokersAndReplicas},
		{"ProduceMovesLogEndsAndHighWatermark", browserProduceMovesLogEndsAndHighWatermark},
		{"StopLeaderShowsFailover", browserStopLeaderShowsFailover},
		{"ScenariosRunToTheirEnd", browserScenariosRunToTheirEnd},
		{"UsesTheAPIChecks", browserUsesTheAPIChecks},
		{"ReconnectsAfterRestart", browserReconnectsAfterRestart},
		{"ShowsGroups", browserShowsGroups},
		{"RuleLinksWorkOffline", browserRuleLinksWorkOffline},
		{"ClusterMode", browserClusterMode},
		{"FitsPhoneAndDesktop", browserFitsPhoneAndDesktop},
		{"KeyboardStopsABroker", browserKeyboardStopsABroker},
		{"ShowsProducersAndMarkers", browserShowsProducersAndMarkers},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, browser) })
	}
}

const partSel = `document.querySelector('[data-part="orders/0"]')`

// The page shows the three brokers, running, and the topic's three
// replicas, the leader crowned.
func browserShowsBrokersAndReplicas(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser)
	waitJS(t, ctx, "three running brokers", `document.querySelectorAll('li[data-broker][data-available="true"]').length === 3`)
	waitJS(t, ctx, "three replicas", partSel+`?.querySelectorAll('.replica').length === 3`)
	d, err := r.client.Topic(t.Context(), "orders")
	require.NoError(t, err)
	leader := d.Partitions[0].Leader
	waitJS(t, ctx, "the leader's crown", fmt.Sprintf(partSel+`.querySelector('.replica.leader[data-broker="%d"] .crown') !== null`, leader))
	screenshot(t, ctx, "brokers-and-replicas")
	require.Empty(t, problems())
}

// docs/phase-4-replication.md § High watermark: producing from the form
// moves every active replica's log end, and the high watermark with them.
// The redraws change the page's elements in place, as
// docs/explorer.md § How the page draws tells: the partition's card and
// its bars stay the same elements while their numbers move.
func browserProduceMovesLogEndsAndHighWatermark(t *testing.T, browser context.Context) {
	_, ctx, problems := explorerServer(t, browser)
	waitJS(t, ctx, "the partition", partSel+`?.dataset.hw === "0"`)
	_, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`window.before = [`+partSel+`, ...`+partSel+`.querySelectorAll(".bar")]`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue("#produce-value", "first"), chromedp.Click("#produce-send"),
	))
	waitJS(t, ctx, "the first record acknowledged", `document.getElementById("outcome").textContent.includes("offset 0")`)
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue("#produce-key", "k"), chromedp.Click("#produce-send")))
	waitJS(t, ctx, "high watermark 2", partSel+`.dataset.hw === "2"`)
	waitJS(t, ctx, "every log end at 2", `[...`+partSel+`.querySelectorAll('.replica')].every(r => r.dataset.logEnd === "2")`)
	waitJS(t, ctx, "the card and its bars the same elements, redrawn", `window.before.length === 4 && `+
		`window.before.every((n, i) => n === [`+partSel+`, ...`+partSel+`.querySelectorAll(".bar")][i]) && `+
		`window.before.slice(1).every(b => b.style.width === "100%")`)
	screenshot(t, ctx, "produced")
	require.Empty(t, problems())
}

// docs/phase-5-failover.md § Candidate selection and safety checks:
// stopping the leader from the page, then failing over from it, shows the
// failover in the timeline with the candidates it compared, and the crown
// on the new leader.
func browserStopLeaderShowsFailover(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser, manual)
	d, err := r.client.Topic(t.Context(), "orders")
	require.NoError(t, err)
	old := d.Partitions[0].Leader
	waitJS(t, ctx, "the stop button", fmt.Sprintf(`document.getElementById("broker-%d-toggle") !== null`, old))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(fmt.Sprintf("#broker-%d-toggle", old))))
	waitJS(t, ctx, "the fail-over button", `document.getElementById("failover-orders/0") !== null`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`[id="failover-orders/0"]`)))
	waitJS(t, ctx, "the failover in the timeline", `document.querySelector('#timeline li[data-event="failover"][data-phase="done"]') !== null`)
	waitJS(t, ctx, "the candidates compared", `document.querySelectorAll('#timeline li[data-event="failover"] [data-candidate]').length === 2`)
	waitJS(t, ctx, "a new leader, epoch 1", fmt.Sprintf(partSel+`.dataset.leader !== "%d" && `+partSel+`.dataset.epoch === "1"`, old))
	waitJS(t, ctx, "the new leader's crown", partSel+`.querySelector('.replica.leader .crown') !== null && `+
		partSel+`.querySelector('.replica.leader').dataset.broker === `+partSel+`.dataset.leader`)
	screenshot(t, ctx, "failover")
	require.Empty(t, problems())
}

// The three guided scenarios, run from the page, each to its end and to
// the state its phase page describes. The steps that show a rule refusing
// a write must see it refused (automatic healing is off then: nothing
// acts first). The end states:
//   - "The leader dies": docs/phase-5-failover.md § Candidate selection and safety checks
//     fails over to a follower at epoch 1; with healing back on, the
//     controller's last rule (docs/design.md § The controller's rules)
//     gives the preferred replica its leadership back at epoch 2; every
//     replica active, the high watermark over all four records.
//   - "A follower falls behind": docs/phase-4-replication.md § Catch-up
//     moves the high watermark over the record the leader kept (3); then
//     the controller shrinks the active set and recovers the follower:
//     leader and epoch 0 unchanged, every replica active, high watermark 4.
//   - "Recovery cuts what was never acknowledged": the run of
//     docs/phase-5-failover.md § Worked example — common prefix 3, offset 3
//     cut and quarantined, r0 r1 r2 r3 and never x — and then leadership
//     back to the preferred replica at epoch 2.
//
// The server fails over after 300 ms, so that the steps that wait for the
// controller are short.
func browserScenariosRunToTheirEnd(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser, func(c *server.Config) { c.FailoverAfter = server.FailoverDelay(300 * time.Millisecond) })
	seen := map[string]bool{"orders": true}
	for _, sc := range []struct {
		id string
		// refusal is the step (from 1) whose write the rule refuses.
		refusal int
		// outcomes are texts a step's outcome must contain, by step.
		outcomes map[int]string
		want     []string
		epoch    uint64
	}{
		{"leader-dies", 2, map[int]string{3: "epoch 1", 6: "leads again at epoch 2"}, []string{"r0", "r1", "r2", "after failover"}, 2},
		{"follower-behind", 2, map[int]string{4: "high watermark 3"}, []string{"r0", "r1", "r2", "two copies"}, 0},
		{"recovery-cuts", 2, map[int]string{4: "epoch 1", 6: "Common prefix 3; cut 1 record(s), offsets 3 to 3", 7: "leads again at epoch 2"},
			[]string{"r0", "r1", "r2", "r3"}, 2},
	} {
		waitJS(t, ctx, "the scenarios", `document.getElementById("scenario-`+sc.id+`") !== null`)
		require.NoError(t, chromedp.Do(ctx, chromedp.Click("#scenario-"+sc.id)))
		for step := 0; step < 10; step++ {
			done, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("scenario").dataset.done`))
			require.NoError(t, err)
			if done == "true" {
				break
			}
			waitJS(t, ctx, "the Next button", `!document.getElementById("scenario-next").disabled`)
			require.NoError(t, chromedp.Do(ctx, chromedp.Click("#scenario-next")))
			waitJS(t, ctx, fmt.Sprintf("%s: step %d done", sc.id, step+1),
				fmt.Sprintf(`document.getElementById("scenario").dataset.step !== "%d" || document.getElementById("outcome").className === "bad"`, step))
			outcome, err := chromedp.Run(ctx, chromedp.Text("#outcome"))
			require.NoError(t, err)
			t.Logf("%s, step %d: %s", sc.id, step+1, outcome)
			class, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("outcome").className`))
			require.NoError(t, err)
			require.NotEqual(t, "bad", class, "%s: step %d failed: %s", sc.id, step+1, outcome)
			if step+1 == sc.refusal {
				require.Contains(t, outcome, "was refused, as the rule says", "%s: step %d", sc.id, step+1)
			}
			if want, ok := sc.outcomes[step+1]; ok {
				require.Contains(t, outcome, want, "%s: step %d", sc.id, step+1)
			}
		}
		waitJS(t, ctx, sc.id+": its end", `document.getElementById("scenario").dataset.done === "true"`)
		if sc.id == "recovery-cuts" {
			// The cut is drawn on the recovery's done entry, once made,
			// not on its intent, which only announces it.
			waitJS(t, ctx, "the quarantined offset", `document.querySelector('#timeline li[data-event="recover"][data-phase="done"] [data-quarantine="3-3"]') !== null`)
			n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#timeline [data-quarantine]').length`))
			require.NoError(t, err)
			require.Equal(t, 1, n, "the quarantine drawn once, on the done entry")
			// Its records, read back from the quarantine file: the x
			// that was never acknowledged.
			require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#timeline li[data-event="recover"][data-phase="done"] button[data-act="quarantine"]`)))
			waitJS(t, ctx, "the quarantined record shown", `[...document.querySelectorAll('#records tr[data-offset="3"] td')].map(td => td.textContent)[3] === "x" && `+
				`document.querySelector("#records .note").textContent.includes("offsets 3 to 3")`)
		}
		screenshot(t, ctx, "scenario-"+sc.id)

		topics, err := r.client.Topics(t.Context())
		require.NoError(t, err)
		var demo string
		for _, tp := range topics.Topics {
			if !seen[tp.Name] {
				demo, seen[tp.Name] = tp.Name, true
			}
		}
		require.NotEmpty(t, demo, sc.id)
		d, err := r.client.Topic(t.Context(), demo)
		require.NoError(t, err)
		p := d.Partitions[0]
		require.Equal(t, p.Preferred, p.Leader, "%s: the preferred replica leads", sc.id)
		require.Equal(t, sc.epoch, p.LeaderEpoch, sc.id)
		require.Equal(t, uint64(len(sc.want)), p.HighWatermark, sc.id)
		require.Len(t, p.Active, 3, "%s: every replica active", sc.id)
		f, err := r.client.Fetch(t.Context(), demo, 0, 0, 10)
		require.NoError(t, err)
		var values []string
		for _, rec := range f.Records {
			values = append(values, string(rec.Value))
		}
		require.Equal(t, sc.want, values, sc.id)
	}
	require.Empty(t, problems())
}

// The page has no private way in: on a server with an auth file its
// stream and its buttons pass the same role checks as curl. Without a
// token it draws nothing, shows the server's refusal in its words and
// opens the token field, rather than reconnecting in vain; with a read
// token it draws the cluster, and its produce is refused for the role;
// with a write token it goes through
// (docs/security.md § Authentication and roles).
func browserUsesTheAPIChecks(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser, withAuth(t))
	waitJS(t, ctx, "the stream refused", `document.getElementById("conn").className === "down"`)
	waitJS(t, ctx, "the server's message, the token field open", `document.getElementById("conn").textContent.includes("needs a token with role read") && `+
		`document.getElementById("token-box").open`)
	time.Sleep(1200 * time.Millisecond) // past the stream's one-second retry
	conn, err := chromedp.Run(ctx, chromedp.Text("#conn"))
	require.NoError(t, err)
	require.NotContains(t, conn, "reconnecting", "a refused token is not retried")
	setToken := func(token string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const i = document.getElementById("token"); i.value = %q; i.dispatchEvent(new Event("change")); })()`, token)))
		require.NoError(t, err)
	}
	setToken(tokenRead)
	waitJS(t, ctx, "the cluster, with the read token", `document.querySelectorAll('li[data-broker]').length === 3`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click("#produce-send")))
	waitJS(t, ctx, "the produce refused", `document.getElementById("outcome").textContent.includes("needs write")`)
	setToken(tokenWrite)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click("#produce-send")))
	waitJS(t, ctx, "the produce acknowledged", `document.getElementById("outcome").textContent.includes("offset 0")`)
	screenshot(t, ctx, "auth")
	d, err := apiclient.New(r.base, apiclient.WithToken(tokenRead)).Topic(t.Context(), "orders")
	require.NoError(t, err)
	require.Equal(t, uint64(1), d.Partitions[0].HighWatermark)
	require.Empty(t, problems())
}

// The page reconnects after a server restart: the stream breaks, the page
// says so, and once a server listens at the address again it follows the
// new one from the last journal entry it had (Last-Event-ID) — what
// happens next shows, nothing shows twice.
func browserReconnectsAfterRestart(t *testing.T, browser context.Context) {
	dir := t.TempDir()
	a := serveAt(t, config(dir, 3), "127.0.0.1:0")
	require.NoError(t, a.srv.Cluster().CreateTopic("orders", 1, 3))
	ctx, problems := browserTab(t, browser)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.base+"/explorer")))
	waitJS(t, ctx, "the journal so far", `document.querySelectorAll('#timeline li').length > 0`)
	a.stop()
	waitJS(t, ctx, "the stream broken", `document.getElementById("conn").className === "down"`)

	b := serveAt(t, config(dir, 3), strings.TrimPrefix(a.base, "http://"))
	waitJS(t, ctx, "the stream back", `document.getElementById("conn").className === ""`)
	_, err := b.client.StopBroker(t.Context(), 2)
	require.NoError(t, err)
	waitJS(t, ctx, "an entry of the new server", `document.querySelector('#timeline li[data-event="broker-stop"]') !== null`)
	waitJS(t, ctx, "broker 2 stopped", `document.querySelector('li[data-broker="2"]').dataset.available === "false"`)
	waitJS(t, ctx, "no entry twice", `(() => { const o = [...document.querySelectorAll('#timeline li')].map(l => l.dataset.offset);
		return new Set(o).size === o.length; })()`)
	screenshot(t, ctx, "reconnected")
	require.Empty(t, problems())
}

// A consumer group joined over HTTP (POST /api/groups/{group}/heartbeat)
// appears in the consumers panel with its member and the partition the
// member holds, its committed offset against the high watermark, and the
// lag (docs/groups.md § Listing, describing, deleting).
func browserShowsGroups(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser)
	c := r.client
	_, err := c.Produce(t.Context(), "orders", []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}})
	require.NoError(t, err)
	hb, err := c.GroupHeartbeat(t.Context(), "billing", apiclient.GroupHeartbeatRequest{Topics: []string{"orders"}})
	require.NoError(t, err)
	for i := 0; i < 100 && len(hb.Assignment) == 0; i++ {
		time.Sleep(20 * time.Millisecond)
		hb, err = c.GroupHeartbeat(t.Context(), "billing", apiclient.GroupHeartbeatRequest{MemberID: hb.MemberID, MemberEpoch: hb.MemberEpoch})
		require.NoError(t, err)
	}
	require.NotEmpty(t, hb.Assignment, "the member gets orders/0")
	_, err = c.CommitGroupOffset(t.Context(), "billing", "orders", 0, hb.MemberID, hb.MemberEpoch, 1)
	require.NoError(t, err)
	group := `document.querySelector('[data-group="billing"]')`
	waitJS(t, ctx, "the group's member", fmt.Sprintf(group+`?.querySelector('[data-member="%s"]')?.textContent.includes("orders/0")`, hb.MemberID))
	waitJS(t, ctx, "its committed offset and lag", group+`.querySelector('tr[data-part="orders/0"] [data-lag]')?.dataset.lag === "1"`)
	text, err := chromedp.Run(ctx, chromedp.Text(`[data-group="billing"]`))
	require.NoError(t, err)
	require.Contains(t, text, "consumer protocol")
	screenshot(t, ctx, "groups")
	require.Empty(t, problems())
}

// Every link from the explorer to the rule behind what it shows leads to
// a page this server serves (GET /docs/pages/{name}), at a heading that
// page has: the anchor the page's links compute is the one the server
// gives the heading (docs.Anchor). No link leaves the server, so they
// work offline; the page opens under its CSP without a complaint.
func browserRuleLinksWorkOffline(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser)
	waitJS(t, ctx, "the healing rule's link", `document.querySelector('#healing a[href]') !== null`)
	type rule struct{ Page, Heading, Href string }
	rules, err := chromedp.Run(ctx, chromedp.Evaluate[[]rule](
		`import("/explorer/words.js").then(m => Object.values(m.RULES).map(r => ({page: r.page, heading: r.heading, href: r.href})))`,
		chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.NotEmpty(t, rules)
	hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href"))`))
	require.NoError(t, err)
	for _, h := range hrefs {
		require.True(t, strings.HasPrefix(h, "/"), "the page links to %s, off this server", h)
	}
	for _, rl := range rules {
		anchor := docs.Anchor(rl.Heading)
		require.Equal(t, "/docs/pages/"+rl.Page+"#"+anchor, rl.Href, "%s § %s", rl.Page, rl.Heading)
		resp, err := http.Get(r.base + "/docs/pages/" + rl.Page)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, rl.Page)
		require.Contains(t, string(body), `id="`+anchor+`"`, "%s has no heading %q", rl.Page, rl.Heading)
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(r.base+rules[0].Href)))
	_, frag, _ := strings.Cut(rules[0].Href, "#")
	waitJS(t, ctx, "the rule's heading", fmt.Sprintf(`document.getElementById(%q)?.tagName.startsWith("H")`, frag))
	waitJS(t, ctx, "the page's style sheet, allowed by the CSP", `getComputedStyle(document.querySelector("main")).maxWidth !== "none"`)
	screenshot(t, ctx, "rule-page")
	require.Empty(t, problems())
}

// In cluster mode automatic healing is a fact of the cluster's metadata
// (docs/explorer.md § Automatic healing at run time): the page says so
// and its switch turns it off through PUT /api/controller, journaled; the
// guided scenarios stay off with a sentence that says why — they stop and
// start brokers, which a cluster of processes leaves to its process
// manager — and no button offers a broker's stop or start. A one-node
// cluster.
func browserClusterMode(t *testing.T, browser context.Context) {
	raft, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	raftAddr := raft.Addr().String()
	require.NoError(t, raft.Close())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg := server.Defaults()
	cfg.DataDir, cfg.KafkaPort, cfg.LogLevel = t.TempDir(), 0, server.LogLevel(server.LevelError)
	cfg.Port = server.Port(ln.Addr().(*net.TCPAddr).Port)
	cfg.NodeID, cfg.Cluster = 1, server.ClusterList{1: raftAddr}
	r := serveOn(t, cfg, ln)
	ctx, problems := browserTab(t, browser)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(r.base+"/explorer")))
	waitJS(t, ctx, "the broker", `document.querySelectorAll('li[data-broker]').length === 1`)
	// No button offers what cluster mode's API refuses: a broker's stop
	// and start are its process manager's.
	waitJS(t, ctx, "no stop button, a note instead", `document.querySelector('li[data-broker="1"] button') === null && `+
		`document.querySelector('li[data-broker="1"]').textContent.includes("process manager")`)
	waitJS(t, ctx, "the healing line", `document.getElementById("healing").textContent.includes("the cluster's metadata")`)
	healing, err := chromedp.Run(ctx, chromedp.Text("#healing"))
	require.NoError(t, err)
	require.NotContains(t, healing, "false")
	require.Contains(t, healing, "Automatic healing is on")
	waitJS(t, ctx, "the scenarios turned off", `[...document.querySelectorAll("#scenario-buttons button")].every(b => b.disabled) && `+
		`!document.getElementById("scenario-note").hidden && document.getElementById("scenario-note").textContent.includes("cluster mode")`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click("#healing-toggle")))
	waitJS(t, ctx, "healing switched off", `document.getElementById("healing").textContent.includes("Automatic healing is off") && `+
		`document.getElementById("healing-toggle")?.textContent === "Turn automatic healing on"`)
	st, err := r.client.Controller(t.Context())
	require.NoError(t, err)
	require.Equal(t, apiclient.ControllerStatus{Automatic: false, FailoverAfterMS: 0, Switchable: true}, *st, "switched through the cluster's metadata")
	j, err := r.client.Journal(t.Context(), 0, 0)
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(j.Entries, func(e apiclient.JournalEntry) bool {
		return e.Event == "healing" && e.By == "operator" && e.Reason == "from the explorer"
	}), "journaled: %+v", j.Entries)
	body, err := chromedp.Run(ctx, chromedp.Text("main"))
	require.NoError(t, err)
	require.NotRegexp(t, `(^|\W)(false|undefined|null)(\W|$)`, body)
	screenshot(t, ctx, "cluster-mode")
	require.Empty(t, problems())
}

// The page is readable at phone width (390x844) and at 1280x800: nothing
// makes it scroll sideways, not even names as long as a topic name or a
// group id may be (docs/explorer.md § What it shows).
func browserFitsPhoneAndDesktop(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser)
	long := strings.Repeat("a-long-topic-name-", 13)[:200]
	require.NoError(t, r.srv.Cluster().CreateTopic(long, 1, 3))
	_, err := r.client.Produce(t.Context(), long, []apiclient.ProduceRecord{{Value: []byte(strings.Repeat("v", 300))}})
	require.NoError(t, err)
	hb, err := r.client.GroupHeartbeat(t.Context(), strings.Repeat("group-", 40), apiclient.GroupHeartbeatRequest{Topics: []string{long},
		ClientID: strings.Repeat("client-", 30)})
	require.NoError(t, err)
	require.NotEmpty(t, hb.MemberID)
	for _, size := range []struct{ w, h int64 }{{390, 844}, {1280, 800}} {
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h)))
		waitJS(t, ctx, "the long topic", fmt.Sprintf(`document.querySelector('[data-part="%s/0"]') !== null && `+
			`document.querySelector('[data-group] [data-member]') !== null`, long))
		waitJS(t, ctx, fmt.Sprintf("no sideways scrolling at %dx%d", size.w, size.h),
			fmt.Sprintf(`window.innerWidth === %d && document.documentElement.scrollWidth <= window.innerWidth`, size.w))
		screenshot(t, ctx, fmt.Sprintf("fits-%dx%d", size.w, size.h))
	}
	require.Empty(t, problems())
}

// The controls work from the keyboard: Tab reaches a broker's stop
// button, Enter stops the broker, and the focus stays on that button —
// now "Start broker N" — through the redraw the stop brings. Focus on a
// link, which has no id, stays on it through a redraw too.
func browserKeyboardStopsABroker(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser, manual)
	waitJS(t, ctx, "the stop buttons", `document.getElementById("broker-2-toggle") !== null`)
	focused := ""
	for i := 0; i < 80 && focused != "broker-2-toggle"; i++ {
		require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)))
		var err error
		focused, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement?.id || ""`))
		require.NoError(t, err)
	}
	require.Equal(t, "broker-2-toggle", focused, "Tab reaches broker 2's stop button")
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)))
	waitJS(t, ctx, "broker 2 stopped", `document.querySelector('li[data-broker="2"]').dataset.available === "false"`)
	waitJS(t, ctx, "the focus kept on its button", `document.activeElement?.id === "broker-2-toggle" && `+
		`document.activeElement.textContent === "Start broker 2"`)
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)))
	waitJS(t, ctx, "broker 2 running again", `document.querySelector('li[data-broker="2"]').dataset.available === "true" && `+
		`document.activeElement?.id === "broker-2-toggle"`)

	// A redraw that moves the focused button (what stood before it went)
	// keeps the focus on it.
	moved, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`import("/explorer/draw.js").then(({ el, replace }) => {
		const box = document.body.appendChild(document.createElement("div"));
		replace(box, [el("p", {}, "a note"), el("button", { id: "moving", type: "button" }, "b")]);
		const b = document.getElementById("moving");
		b.focus();
		replace(box, [el("button", { id: "moving", type: "button" }, "b")]);
		const kept = document.activeElement === b && box.firstChild === b && box.childNodes.length === 1;
		box.remove();
		return kept;
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.True(t, moved, "the focus stays on a button a redraw moved")

	_, err = chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("#healing a").focus()`))
	require.NoError(t, err)
	_, err = r.client.SetAutomatic(t.Context(), true, "a redraw of the healing line")
	require.NoError(t, err)
	waitJS(t, ctx, "the healing line redrawn, the focus on its link", `document.getElementById("healing").textContent.includes("is on") && `+
		`document.activeElement === document.querySelector("#healing a")`)
	require.Empty(t, problems())
}

// A partition's records show their producers and transactions
// (docs/explorer.md § What it shows, docs/phase-6-network-api.md §
// Producers and transaction markers): a plain record has an empty
// producer cell; an idempotent producer's record names its id, epoch and
// sequence; a transactional one is tagged txn; a commit marker and an
// abort marker are rows of their own style that say what they are in
// words, their producer cell the id and epoch only. Written through the
// cluster, as the Kafka listener writes them.
func browserShowsProducersAndMarkers(t *testing.T, browser context.Context) {
	r, ctx, problems := explorerServer(t, browser)
	cl := r.srv.Cluster()
	newID := func() int64 {
		t.Helper()
		id, err := cl.NewProducerID(t.Context())
		require.NoError(t, err)
		return id
	}
	idem, committed, aborted := newID(), newID(), newID()
	p := cluster.NewProducer(cl, "orders")
	send := func(rec envelope.Record) {
		t.Helper()
		_, err := p.SendBatchTo(0, []topic.Message{{Payload: envelope.Payload(rec)}})
		require.NoError(t, err)
	}
	send(envelope.Record{Value: []byte("plain")})
	send(envelope.Record{Key: []byte("k"), Value: []byte("once"), HasProducer: true, Producer: envelope.Producer{ID: idem, Sequence: 0}})
	send(envelope.Record{Value: []byte("in a txn"), HasProducer: true, Producer: envelope.Producer{ID: committed, Sequence: 0}, Transactional: true})
	require.NoError(t, cl.WriteTxnMarker(t.Context(), "orders", 0, committed, 0, true))
	send(envelope.Record{Value: []byte("undone"), HasProducer: true, Producer: envelope.Producer{ID: aborted, Epoch: 2, Sequence: 0}, Transactional: true})
	require.NoError(t, cl.WriteTxnMarker(t.Context(), "orders", 0, aborted, 2, false))

	waitJS(t, ctx, "the six records", partSel+`?.dataset.hw === "6" && document.getElementById("browse-partition").value === "orders/0"`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#browse-form button[type="submit"]`)))
	waitJS(t, ctx, "the records table", `document.querySelectorAll("#records tbody tr").length === 6`)
	type row struct {
		Cells                   []string
		Class, Producer, Marker string
		Transactional           bool
		FontStyle, Edge         string
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]row](`[...document.querySelectorAll("#records tbody tr")].map(tr => ({
		cells: [...tr.children].map(td => td.textContent), class: tr.className, producer: tr.dataset.producer || "",
		marker: tr.dataset.marker || "", transactional: tr.dataset.transactional !== undefined,
		fontStyle: getComputedStyle(tr.children[0]).fontStyle, edge: getComputedStyle(tr.children[0]).borderLeftStyle }))`))
	require.NoError(t, err)
	require.Len(t, rows, 6)
	cells := func(i int) []string { return append(rows[i].Cells[:1:1], rows[i].Cells[2:]...) } // without the time
	id := func(n int64) string { return fmt.Sprint(n) }
	require.Equal(t, []string{"0", "(null)", "plain", "", ""}, cells(0), "a plain record: no producer")
	require.Equal(t, []string{"1", "k", "once", "", id(idem) + " · epoch 0 · seq 0"}, cells(1))
	require.Equal(t, []string{"2", "(null)", "in a txn", "", id(committed) + " · epoch 0 · seq 0 txn"}, cells(2))
	require.True(t, rows[2].Transactional)
	require.Empty(t, rows[2].Marker)
	require.Equal(t, "commit", rows[3].Marker)
	require.Equal(t, "marker commit", rows[3].Class)
	require.Len(t, rows[3].Cells, 4, "offset, time, the marker in words, the producer")
	require.True(t, strings.HasPrefix(rows[3].Cells[2], "commit marker"), rows[3].Cells[2])
	require.Equal(t, id(committed)+" · epoch 0", rows[3].Cells[3])
	require.Equal(t, []string{"4", "(null)", "undone", "", id(aborted) + " · epoch 2 · seq 0 txn"}, cells(4))
	require.Equal(t, "abort", rows[5].Marker)
	require.True(t, strings.HasPrefix(rows[5].Cells[2], "abort marker"), rows[5].Cells[2])
	require.Equal(t, id(aborted)+" · epoch 2", rows[5].Cells[3])
	// The markers' rows look unlike the data's, and unlike each other, by
	// more than colour: italics, a solid edge for commit, a dashed one for
	// abort.
	for i, want := range map[int]row{0: {FontStyle: "normal", Edge: "none"}, 3: {FontStyle: "italic", Edge: "solid"}, 5: {FontStyle: "italic", Edge: "dashed"}} {
		require.Equal(t, want.FontStyle, rows[i].FontStyle, "row %d", i)
		require.Equal(t, want.Edge, rows[i].Edge, "row %d", i)
	}
	require.Equal(t, fmt.Sprint(idem), rows[1].Producer)
	waitJS(t, ctx, "the legend's link to the rule", `document.querySelector('#records a[href$="#producers-and-transaction-markers"]') !== null`)
	screenshot(t, ctx, "producers-and-markers")
	require.Empty(t, problems())
}
