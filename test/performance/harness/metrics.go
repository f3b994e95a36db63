/*
Copyright 2026 The Koordinator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// sample is one line of Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseProm reads the Prometheus text format: comments skipped, one sample a
// line, `name{k="v",...} value [timestamp]`.
func parseProm(r io.Reader) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		var rest string
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				return nil, fmt.Errorf("bad metric line %q", line)
			}
			s.name = line[:i]
			if err := parseLabels(line[i+1:j], s.labels); err != nil {
				return nil, fmt.Errorf("metric line %q: %w", line, err)
			}
			rest = strings.TrimSpace(line[j+1:])
		} else {
			f := strings.Fields(line)
			s.name, rest = f[0], strings.Join(f[1:], " ")
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return nil, fmt.Errorf("metric line %q has no value", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metric line %q: %w", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseLabels(s string, into map[string]string) error {
	for s = strings.TrimSpace(s); s != ""; {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return fmt.Errorf("bad labels %q", s)
		}
		key := strings.TrimSpace(s[:eq])
		var b strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[i])
				}
				continue
			}
			b.WriteByte(s[i])
		}
		if i >= len(s) {
			return fmt.Errorf("unterminated label value in %q", s)
		}
		into[key] = b.String()
		s = strings.TrimLeft(strings.TrimSpace(s[i+1:]), ",")
		s = strings.TrimSpace(s)
	}
	return nil
}

func scrape(url string) ([]sample, error) {
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseProm(resp.Body)
}

// apiCounts are koord-queue's requests to the API server by method and code,
// from client-go's rest_client_requests_total.
type apiCounts struct {
	byMethod map[string]float64
	byCode   map[string]float64
}

func requestCounts(samples []sample) apiCounts {
	c := apiCounts{byMethod: map[string]float64{}, byCode: map[string]float64{}}
	for _, s := range samples {
		if s.name != "rest_client_requests_total" {
			continue
		}
		c.byMethod[s.labels["method"]] += s.value
		c.byCode[s.labels["code"]] += s.value
	}
	return c
}

func (c apiCounts) minus(o apiCounts) apiCounts {
	d := apiCounts{byMethod: map[string]float64{}, byCode: map[string]float64{}}
	for k, v := range c.byMethod {
		d.byMethod[k] = v - o.byMethod[k]
	}
	for k, v := range c.byCode {
		d.byCode[k] = v - o.byCode[k]
	}
	return d
}

// writes are every request that is not a read (GET, LIST, WATCH are all
// reported as method GET by client-go).
func (c apiCounts) writes() float64 {
	var n float64
	for m, v := range c.byMethod {
		switch strings.ToUpper(m) {
		case "GET", "LIST", "WATCH", "HEAD", "OPTIONS":
		default:
			n += v
		}
	}
	return n
}

// apiServerWrites reads the writes the API server has handled so far, from
// its own apiserver_request_total; ok is false when it cannot be read.
func apiServerWrites(ctx context.Context, cfg *rest.Config) (float64, bool) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, false
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, false
	}
	samples, err := parseProm(bytes.NewReader(raw))
	if err != nil {
		return 0, false
	}
	var n float64
	found := false
	for _, s := range samples {
		if s.name != "apiserver_request_total" {
			continue
		}
		found = true
		switch s.labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
			n += s.value
		}
	}
	return n, found
}

// PassesMetric is the counter of scheduling passes koord-queue may export.
const PassesMetric = "koord_queue_scheduling_passes_total"

// counterSum adds every series of a counter; ok is false when it is absent.
func counterSum(samples []sample, name string) (float64, bool) {
	var sum float64
	var ok bool
	for _, s := range samples {
		if s.name == name {
			sum += s.value
			ok = true
		}
	}
	return sum, ok
}

// procStats are the CPU and memory figures of a running process.
type procStats struct {
	UserSeconds, SystemSeconds float64
	PeakRSSBytes               int64
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

func readProc(pid int) (procStats, error) {
	var ps procStats
	st, err := readStat(pid)
	if err != nil {
		return ps, err
	}
	ps.UserSeconds, ps.SystemSeconds = st.user, st.system
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ps, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			ps.PeakRSSBytes = kb * 1024
		}
	}
	return ps, nil
}

// procStat is what /proc/<pid>/stat says of a process.
type procStat struct {
	comm         string
	ppid         int
	user, system float64
}

func readStat(pid int) (procStat, error) {
	var ps procStat
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ps, err
	}
	// The command is in parentheses and may hold spaces; after it come state
	// (field 3), ppid (4), ..., utime (14) and stime (15).
	s := string(stat)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return ps, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[closing+1:])
	if len(f) < 13 {
		return ps, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ps.comm = s[open+1 : closing]
	ps.ppid, _ = strconv.Atoi(f[1])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	ps.user, ps.system = ut/clockTicks, st/clockTicks
	return ps, nil
}

// cpuReading is the CPU seconds used so far by the processes of a run.
type cpuReading struct {
	koordQueue, apiServer, etcd, harness float64
	missing                              []string
}

// machineCPU reads koord-queue's CPU, this process's, and that of the
// kube-apiserver and etcd this process started (envtest's children).
func machineCPU(koordQueuePID int) cpuReading {
	var r cpuReading
	total := func(pid int) (float64, bool) {
		st, err := readStat(pid)
		return st.user + st.system, err == nil
	}
	var ok bool
	if r.koordQueue, ok = total(koordQueuePID); !ok {
		r.missing = append(r.missing, "koord-queue")
	}
	if r.harness, ok = total(os.Getpid()); !ok {
		r.missing = append(r.missing, "harness")
	}
	found := map[string]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.ppid != os.Getpid() || (st.comm != "kube-apiserver" && st.comm != "etcd") {
			continue
		}
		found[st.comm] = true
		if st.comm == "etcd" {
			r.etcd += st.user + st.system
		} else {
			r.apiServer += st.user + st.system
		}
	}
	for _, comm := range []string{"kube-apiserver", "etcd"} {
		if !found[comm] {
			r.missing = append(r.missing, comm)
		}
	}
	return r
}

// MinWritesPerUnit is what one unit costs the API server at the least: its
// creation, Running and Succeed from the job extension, and from koord-queue
// the admission and its Scheduled event.
const MinWritesPerUnit = 5

// apiBound fills the API-bound figures from the writes the API server
// handled during the run.
func (c *CPUFigures) apiBound(writes float64, units, nproc int, wall float64) {
	if writes <= 0 || nproc <= 0 {
		return
	}
	c.APIServerWrites = writes
	perWrite := (c.APIServerSeconds + c.EtcdSeconds) / writes
	c.ControlPlaneMillisPerWrite = round(perWrite*1000, 3)
	c.APIBoundSeconds = round(float64(units*MinWritesPerUnit)*perWrite/float64(nproc), 1)
	if c.APIBoundSeconds > 0 {
		c.WallToAPIBound = round(wall/c.APIBoundSeconds, 3)
	}
}

// minus gives the figures of the span between two readings.
func (r cpuReading) minus(before cpuReading, seconds float64, nproc int) CPUFigures {
	c := CPUFigures{
		KoordQueueSeconds: round(r.koordQueue-before.koordQueue, 2),
		APIServerSeconds:  round(r.apiServer-before.apiServer, 2),
		EtcdSeconds:       round(r.etcd-before.etcd, 2),
		HarnessSeconds:    round(r.harness-before.harness, 2),
	}
	if seconds > 0 && nproc > 0 {
		c.MachineBusy = round((c.KoordQueueSeconds+c.APIServerSeconds+c.EtcdSeconds+c.HarnessSeconds)/(seconds*float64(nproc)), 3)
	}
	if missing := append(before.missing, r.missing...); len(missing) > 0 {
		c.Note = "not read: " + strings.Join(missing, ", ")
	}
	return c
}

// Machine describes where a run happened.
type Machine struct {
	NProc    int    `json:"nproc"`
	CPUModel string `json:"cpuModel"`
	MemTotal string `json:"memTotal"`
}

func describeMachine(nproc int) Machine {
	m := Machine{NProc: nproc}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				m.MemTotal = strings.TrimSpace(rest)
			}
		}
	}
	return m
}
