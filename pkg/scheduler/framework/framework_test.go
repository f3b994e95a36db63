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

package framework

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// calls records what the fake plugins were asked, in order.
type calls struct{ log []string }

func (c *calls) add(s string) { c.log = append(c.log, s) }

// fake is the part every fake plugin shares.
type fake struct {
	name  string
	calls *calls
}

func (f *fake) Name() string { return f.name }

type sorter struct{ fake }

func (s *sorter) Less(a, b SortUnit) bool { return a.Name < b.Name }

type majorSorter struct {
	sorter
	major bool
}

func (s *majorSorter) PriorityMajor() bool { return s.major }

type mapper struct{ fake }

func (m *mapper) Map(u *schedv1alpha1.QueueUnit) (schedtypes.QueueName, schedtypes.QuotaName) {
	return schedtypes.QueueName("q-" + u.Name), schedtypes.QuotaName("quota-" + u.Name)
}
func (m *mapper) Cohort(q schedtypes.QuotaName) schedtypes.CohortName {
	return schedtypes.CohortName("cohort-of-" + q)
}

type filter struct {
	fake
	refuse *Status
}

func (f *filter) Filter(_ context.Context, u *UnitInfo) *Status {
	f.calls.add("filter " + f.name + " " + string(u.Key))
	return f.refuse
}

type reserver struct {
	fake
	refuse *Status
}

func (r *reserver) Reserve(_ context.Context, u *UnitInfo) *Status {
	r.calls.add("reserve " + r.name + " " + string(u.Key))
	return r.refuse
}

func (r *reserver) Unreserve(_ context.Context, u *UnitInfo) {
	r.calls.add("unreserve " + r.name + " " + string(u.Key))
}

type usage struct {
	fake
	got map[schedtypes.UnitKey]*schedtypes.Holding
}

func (u *usage) SetUsage(key schedtypes.UnitKey, h *schedtypes.Holding) {
	if u.got == nil {
		u.got = map[schedtypes.UnitKey]*schedtypes.Holding{}
	}
	u.got[key] = h
}

type preempter struct {
	fake
	answer schedtypes.Victims
	borrow bool
}

func (p *preempter) Preempt(_ context.Context, u *UnitInfo, preempt, reclaim bool, skip func(schedtypes.UnitKey) bool) schedtypes.Victims {
	p.calls.add("preempt " + string(u.Key) + " " + boolWord(preempt, "preempt") + " " + boolWord(reclaim, "reclaim") + " skip-x=" + boolWord(skip("x"), "yes"))
	return p.answer
}

func (p *preempter) WouldBorrow(u *UnitInfo) bool {
	p.calls.add("wouldborrow " + string(u.Key))
	return p.borrow
}

func boolWord(b bool, word string) string {
	if b {
		return word
	}
	return "no-" + word
}

type sharer struct{ fake }

func (s *sharer) Share(schedtypes.QuotaName) float64 { return 0.5 }
func (s *sharer) Sharing() bool                      { return true }
func (s *sharer) BelowMin(schedtypes.QuotaName) bool { return false }

type lister struct {
	fake
	infos []schedtypes.Info
}

func (l *lister) ListQuotas() []schedtypes.Info { return l.infos }

type syncer struct {
	fake
	synced bool
}

func (s *syncer) HasSynced() bool { return s.synced }

type runner struct{ fake }

func (r *runner) Start(ctx context.Context) error { <-ctx.Done(); return nil }

// handle is a Handle that tests never need to reach the API.
type handle struct{ clock clock.Clock }

func (h *handle) Client() client.Client                                 { return nil }
func (h *handle) Cache() cache.Cache                                    { return nil }
func (h *handle) Recorder() record.EventRecorder                        { return record.NewFakeRecorder(8) }
func (h *handle) Freed(schedtypes.CohortName)                           {}
func (h *handle) FreedRoom(schedtypes.CohortName, schedtypes.Resources) {}
func (h *handle) HoldingsChanged(schedtypes.QuotaName, int32, bool)     {}
func (h *handle) Invalidate()                                           {}
func (h *handle) Clock() clock.Clock                                    { return h.clock }

var _ Handle = (*handle)(nil)

// registryOf registers each plugin under its own name.
func registryOf(plugins ...Plugin) Registry {
	r := Registry{}
	for _, p := range plugins {
		r[p.Name()] = func(runtime.RawExtension, Handle) (Plugin, error) { return p, nil }
	}
	return r
}

// configOf enables the named plugins in order.
func configOf(names ...string) *configv1.KoordQueueConfiguration {
	cfg := &configv1.KoordQueueConfiguration{}
	for _, n := range names {
		cfg.Plugins = append(cfg.Plugins, configv1.Plugin{Name: n})
	}
	return cfg
}

// newFramework makes a framework of the given plugins, enabled in their order.
func newFramework(t *testing.T, plugins ...Plugin) *Framework {
	t.Helper()
	names := make([]string, 0, len(plugins))
	for _, p := range plugins {
		names = append(names, p.Name())
	}
	f, err := New(configOf(names...), registryOf(plugins...), &handle{clock: clocktesting.NewFakeClock(time.Now())})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f
}

func TestNewRefusesAnUnknownPlugin(t *testing.T) {
	reg := registryOf(&mapper{fake{name: "Zeta"}}, &sorter{fake{name: "Alpha"}})
	_, err := New(configOf("Zeta", "Missing"), reg, &handle{})
	if err == nil {
		t.Fatal("an unregistered plugin was accepted")
	}
	for _, want := range []string{`"Missing"`, "known: Alpha, Zeta"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestNewWrapsAFactoryError(t *testing.T) {
	bad := errors.New("args do not decode")
	reg := Registry{"Broken": func(runtime.RawExtension, Handle) (Plugin, error) { return nil, bad }}
	_, err := New(configOf("Broken"), reg, &handle{})
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), "plugin Broken") {
		t.Fatalf("error %v: want the factory's error, naming plugin Broken", err)
	}
}

func TestNewRefusesWhatAFactoryMisbuilds(t *testing.T) {
	for name, tc := range map[string]struct {
		built Plugin
		want  string
	}{
		"nothing":    {nil, "built nothing"},
		"wrong name": {&mapper{fake{name: "Other"}}, `named "Other"`},
	} {
		t.Run(name, func(t *testing.T) {
			reg := Registry{"Mine": func(runtime.RawExtension, Handle) (Plugin, error) { return tc.built, nil }}
			_, err := New(configOf("Mine"), reg, &handle{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Mine") {
				t.Fatalf("error %v: want one naming plugin Mine and saying %q", err, tc.want)
			}
		})
	}
}

func TestNewNeedsAMapper(t *testing.T) {
	_, err := New(configOf("Sort"), registryOf(&sorter{fake{name: "Sort"}}), &handle{})
	if err == nil || !strings.Contains(err.Error(), configv1.PluginElasticQuotaV2) {
		t.Fatalf("error %v: want one asking to enable %s", err, configv1.PluginElasticQuotaV2)
	}
}

func TestNewGivesEachPluginItsArgs(t *testing.T) {
	got := map[string]string{}
	factory := func(name string) Factory {
		return func(args runtime.RawExtension, _ Handle) (Plugin, error) {
			got[name] = string(args.Raw)
			return &mapper{fake{name: name}}, nil
		}
	}
	// One mapper only may be enabled, so the second is a plain plugin.
	reg := Registry{
		"A": factory("A"),
		"B": func(args runtime.RawExtension, _ Handle) (Plugin, error) {
			got["B"] = string(args.Raw)
			return &fake{name: "B"}, nil
		},
	}
	cfg := configOf("A", "B")
	cfg.PluginConfigs = []configv1.PluginConfig{{Name: "A", Args: runtime.RawExtension{Raw: []byte(`{"x":1}`)}}}
	if _, err := New(cfg, reg, &handle{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"A": `{"x":1}`, "B": ""}, got); diff != "" {
		t.Errorf("args given (-want +got):\n%s", diff)
	}
}

// TestNewRefusesTwoPluginsInOneRole checks that each role only one plugin
// may hold refuses a second, naming both, while one of each starts.
func TestNewRefusesTwoPluginsInOneRole(t *testing.T) {
	m := &mapper{fake{name: "Map"}}
	for _, tc := range []struct {
		role   string
		first  Plugin
		second Plugin
	}{
		{"sort queues", &sorter{fake{name: "SortA"}}, &majorSorter{sorter: sorter{fake{name: "SortB"}}}},
		{"map units to queues", &mapper{fake{name: "MapA"}}, &mapper{fake{name: "MapB"}}},
		{"choose preemption victims", &preempter{fake: fake{name: "PreemptA"}}, &preempter{fake: fake{name: "PreemptB"}}},
		{"order queues by fair share", &sharer{fake{name: "ShareA"}}, &sharer{fake{name: "ShareB"}}},
		{"list quotas", &lister{fake: fake{name: "ListA"}}, &lister{fake: fake{name: "ListB"}}},
	} {
		t.Run(tc.role, func(t *testing.T) {
			plugins := []Plugin{tc.first, tc.second}
			if _, ok := tc.first.(QueueMapPlugin); !ok {
				plugins = append([]Plugin{m}, plugins...)
			}
			names := []string{}
			for _, p := range plugins {
				names = append(names, p.Name())
			}
			_, err := New(configOf(names...), registryOf(plugins...), &handle{})
			if err == nil {
				t.Fatalf("two plugins that %s were accepted", tc.role)
			}
			for _, want := range []string{tc.first.Name(), tc.second.Name(), tc.role} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			// Either alone starts.
			if _, err := New(configOf(names[:len(names)-1]...), registryOf(plugins...), &handle{}); err != nil {
				t.Errorf("one plugin that may %s was refused: %v", tc.role, err)
			}
		})
	}
}

func TestManyFiltersReserversAndUsagesAreFine(t *testing.T) {
	c := &calls{}
	f := newFramework(t, &mapper{fake{name: "Map"}},
		&filter{fake: fake{"F1", c}}, &filter{fake: fake{"F2", c}},
		&reserver{fake: fake{"R1", c}}, &reserver{fake: fake{"R2", c}},
		&usage{fake: fake{name: "U1"}}, &usage{fake: fake{name: "U2"}},
		&syncer{fake: fake{name: "S1"}, synced: true}, &syncer{fake: fake{name: "S2"}, synced: true},
		&runner{fake{name: "Run1"}}, &runner{fake{name: "Run2"}})
	if len(f.Plugins()) != 11 || len(f.Runnables()) != 2 {
		t.Errorf("got %d plugins and %d runnables, want 11 and 2", len(f.Plugins()), len(f.Runnables()))
	}
}

func TestFilterRunsInOrderAndStopsAtTheFirstRefusal(t *testing.T) {
	c := &calls{}
	refusal := NewStatus(Unschedulable, schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "a", Detail: "cpu"}, "not now")
	f := newFramework(t, &mapper{fake{name: "Map"}},
		&filter{fake: fake{"F1", c}}, &filter{fake: fake{"F2", c}, refuse: refusal}, &filter{fake: fake{"F3", c}})
	s := f.Filter(context.Background(), &UnitInfo{Key: "ns/u"})
	if s != refusal {
		t.Errorf("Filter answered %+v, want the second filter's refusal", s)
	}
	if diff := cmp.Diff([]string{"filter F1 ns/u", "filter F2 ns/u"}, c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}

	c.log = nil
	f = newFramework(t, &mapper{fake{name: "Map"}}, &filter{fake: fake{"F2", c}}, &filter{fake: fake{"F1", c}},
		&filter{fake: fake{"F3", c}, refuse: &Status{Code: Success}})
	if s := f.Filter(context.Background(), &UnitInfo{Key: "ns/v"}); !s.IsSuccess() {
		t.Errorf("Filter answered %+v, want success", s)
	}
	if diff := cmp.Diff([]string{"filter F2 ns/v", "filter F1 ns/v", "filter F3 ns/v"}, c.log); diff != "" {
		t.Errorf("calls in configuration order (-want +got):\n%s", diff)
	}
}

func TestReserveRollsBackOnRefusal(t *testing.T) {
	c := &calls{}
	refusal := NewStatus(Unschedulable, schedtypes.Reason{Subject: "taken"}, "taken meanwhile")
	f := newFramework(t, &mapper{fake{name: "Map"}},
		&reserver{fake: fake{"R1", c}}, &reserver{fake: fake{"R2", c}},
		&reserver{fake: fake{"R3", c}, refuse: refusal}, &reserver{fake: fake{"R4", c}})
	if s := f.Reserve(context.Background(), &UnitInfo{Key: "u"}); s != refusal {
		t.Errorf("Reserve answered %+v, want R3's refusal", s)
	}
	want := []string{"reserve R1 u", "reserve R2 u", "reserve R3 u", "unreserve R2 u", "unreserve R1 u"}
	if diff := cmp.Diff(want, c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestReserveAndUnreserve(t *testing.T) {
	c := &calls{}
	f := newFramework(t, &mapper{fake{name: "Map"}}, &reserver{fake: fake{"R1", c}}, &reserver{fake: fake{"R2", c}})
	if s := f.Reserve(context.Background(), &UnitInfo{Key: "u"}); !s.IsSuccess() {
		t.Fatalf("Reserve answered %+v", s)
	}
	f.Unreserve(context.Background(), &UnitInfo{Key: "u"})
	want := []string{"reserve R1 u", "reserve R2 u", "unreserve R2 u", "unreserve R1 u"}
	if diff := cmp.Diff(want, c.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestSetUsageReachesEveryUsagePlugin(t *testing.T) {
	u1, u2 := &usage{fake: fake{name: "U1"}}, &usage{fake: fake{name: "U2"}}
	f := newFramework(t, &mapper{fake{name: "Map"}}, u1, u2)
	h := &schedtypes.Holding{Key: "ns/a", Quota: "q", Used: schedtypes.Resources{"cpu": 1000}}
	f.SetUsage("ns/a", h)
	f.SetUsage("ns/b", nil)
	for _, u := range []*usage{u1, u2} {
		if got, ok := u.got["ns/a"]; !ok || got != h {
			t.Errorf("%s got %+v for ns/a, want the holding", u.name, got)
		}
		if got, ok := u.got["ns/b"]; !ok || got != nil {
			t.Errorf("%s got %+v for ns/b, want nil (holds nothing)", u.name, got)
		}
	}
}

func TestPreemptIsGated(t *testing.T) {
	c := &calls{}
	victims := schedtypes.Victims{Units: []schedtypes.Holding{{Key: "ns/v"}}}
	p := &preempter{fake: fake{"Preempt", c}, answer: victims, borrow: true}
	f := newFramework(t, &mapper{fake{name: "Map"}}, p)
	skip := func(k schedtypes.UnitKey) bool { return k == "x" }
	u := &UnitInfo{Key: "ns/u"}

	if got := f.Preempt(context.Background(), u, false, false, skip); len(got.Units) != 0 || len(c.log) != 0 {
		t.Errorf("with neither preemption nor reclaim allowed: got %+v, calls %v; want nothing asked", got, c.log)
	}
	for _, tc := range []struct {
		preempt, reclaim bool
		call             string
	}{
		{true, false, "preempt ns/u preempt no-reclaim skip-x=yes"},
		{false, true, "preempt ns/u no-preempt reclaim skip-x=yes"},
	} {
		c.log = nil
		got := f.Preempt(context.Background(), u, tc.preempt, tc.reclaim, skip)
		if diff := cmp.Diff(victims, got); diff != "" {
			t.Errorf("victims (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{tc.call}, c.log); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	}
	if !f.WouldBorrow(u) {
		t.Error("WouldBorrow did not ask the preemption plugin")
	}

	none := newFramework(t, &mapper{fake{name: "Map"}})
	if got := none.Preempt(context.Background(), u, true, true, skip); len(got.Units) != 0 || got.Waiting {
		t.Errorf("without a preemption plugin: got %+v, want no victims", got)
	}
	if none.WouldBorrow(u) {
		t.Error("without a preemption plugin nothing would borrow")
	}
}

func TestHasSynced(t *testing.T) {
	a, b := &syncer{fake: fake{name: "A"}}, &syncer{fake: fake{name: "B"}}
	f := newFramework(t, &mapper{fake{name: "Map"}}, a, b)
	if f.HasSynced() {
		t.Error("synced before any plugin did")
	}
	a.synced = true
	if f.HasSynced() {
		t.Error("synced before plugin B did")
	}
	b.synced = true
	if !f.HasSynced() {
		t.Error("not synced after every plugin did")
	}
	if !newFramework(t, &mapper{fake{name: "Map"}}).HasSynced() {
		t.Error("without informers the framework is synced at once")
	}
}

func TestLessAndPriorityMajor(t *testing.T) {
	none := newFramework(t, &mapper{fake{name: "Map"}})
	if none.Less() != nil || !none.PriorityMajor() {
		t.Error("without a sort plugin: want a nil Less (the queues' default order) that is priority-major")
	}
	plain := newFramework(t, &mapper{fake{name: "Map"}}, &sorter{fake{name: "Sort"}})
	if plain.PriorityMajor() {
		t.Error("a sort plugin that declares nothing was taken as priority-major")
	}
	a, b := &schedtypes.Unit{Name: "a"}, &schedtypes.Unit{Name: "b"}
	if less := plain.Less(); less == nil || !less(a, b) || less(b, a) {
		t.Error("Less is not the sort plugin's")
	}
	for _, major := range []bool{true, false} {
		f := newFramework(t, &mapper{fake{name: "Map"}}, &majorSorter{sorter: sorter{fake{name: "Sort"}}, major: major})
		if f.PriorityMajor() != major {
			t.Errorf("PriorityMajor() = %v, want what the plugin declares (%v)", f.PriorityMajor(), major)
		}
	}
}

func TestMapCohortListAndShare(t *testing.T) {
	infos := []schedtypes.Info{{Name: "q1"}, {Name: "q2"}}
	s := &sharer{fake{name: "Share"}}
	f := newFramework(t, &mapper{fake{name: "Map"}}, &lister{fake: fake{name: "List"}, infos: infos}, s)
	u := &schedv1alpha1.QueueUnit{}
	u.Name = "job"
	q, quota := f.Map(u)
	if q != "q-job" || quota != "quota-job" {
		t.Errorf("Map = %q, %q; want the mapper's answer", q, quota)
	}
	// The mapper builds new strings each call; Map hands out one copy.
	u2 := u.DeepCopy()
	q2, quota2 := f.Map(u2)
	if unsafe.StringData(string(q2)) != unsafe.StringData(string(q)) || unsafe.StringData(string(quota2)) != unsafe.StringData(string(quota)) {
		t.Error("Map of two units naming the same queue and quota did not hand out one shared copy of each")
	}
	if got := f.Cohort("team"); got != "cohort-of-team" {
		t.Errorf("Cohort = %q", got)
	}
	if diff := cmp.Diff(infos, f.ListQuotas()); diff != "" {
		t.Errorf("ListQuotas (-want +got):\n%s", diff)
	}
	if f.Sharer() != s {
		t.Error("Sharer is not the share plugin")
	}
	bare := newFramework(t, &mapper{fake{name: "Map"}})
	if bare.ListQuotas() != nil || bare.Sharer() != nil {
		t.Error("without a lister or sharer: want no quotas and no sharer")
	}
}

func TestStatus(t *testing.T) {
	var none *Status
	if !none.IsSuccess() || !(&Status{Code: Success}).IsSuccess() {
		t.Error("nil and Success must be success")
	}
	for _, c := range []Code{Unschedulable, UnschedulableAndUnresolvable, Error} {
		if NewStatus(c, schedtypes.Reason{Subject: "r"}, "m").IsSuccess() {
			t.Errorf("code %d taken as success", c)
		}
	}
}
