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

package watchjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
	kjson "sigs.k8s.io/json"
)

// decoded counts the objects decoded by namespaces.Decode.
var decoded int

// namespaces decodes Namespaces here in the tests: like a custom resource,
// their keys sorted put apiVersion and kind first.
var namespaces = Kind{GroupVersionKind: corev1.SchemeGroupVersion.WithKind("Namespace"), Decode: func(data []byte) (runtime.Object, error) {
	decoded++
	ns := &corev1.Namespace{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, ns); err != nil {
		return nil, err
	}
	ns.TypeMeta = metav1.TypeMeta{}
	return ns, nil
}}

// event is a watch event as kube-apiserver writes one: its object's keys
// sorted, on one line.
func event(t *testing.T, typ watch.EventType, obj runtime.Object) string {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	raw, err = json.Marshal(map[string]any{"type": typ, "object": m})
	if err != nil {
		t.Fatal(err)
	}
	// Struct order, as the API server writes a WatchEvent: type first.
	s := strings.Replace(string(raw), `{"object":`, `{"type":"`+string(typ)+`","object":`, 1)
	return strings.Replace(s, `,"type":"`+string(typ)+`"}`, `}`, 1) + "\n"
}

func namespace(name string, annotations map[string]string) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "7", Annotations: annotations},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
}

type received struct {
	typ watch.EventType
	obj runtime.Object
}

// decodeStream decodes stream the way client-go's REST client decodes a
// watch with these codecs (rest.Request.Watch).
func decodeStream(t *testing.T, stream string) ([]received, error) {
	t.Helper()
	c, err := newCodecs(clientgoscheme.Scheme, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	objects, events, framer, err := runtime.NewClientNegotiator(c, corev1.SchemeGroupVersion).StreamDecoder(runtime.ContentTypeJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := restclientwatch.NewDecoder(streaming.NewDecoder(framer.NewFrameReader(io.NopCloser(strings.NewReader(stream))), events), objects)
	var out []received
	for {
		typ, obj, err := d.Decode()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, received{typ, obj})
	}
}

func TestEventsAreDecodedByTheKindsDecoder(t *testing.T) {
	long := strings.Repeat("x", 3*readSize)
	stream := event(t, watch.Added, namespace("a", map[string]string{"k": "v"})) + "\n" +
		event(t, watch.Modified, namespace("b", map[string]string{"long": long})) +
		event(t, watch.Deleted, namespace("c", nil))
	// The last line may come without its line break.
	stream = strings.TrimSuffix(stream, "\n")
	decoded = 0
	got, err := decodeStream(t, stream)
	if err != nil {
		t.Fatal(err)
	}
	if decoded != 3 {
		t.Errorf("the kind's decoder decoded %d objects, want 3", decoded)
	}
	want := []received{
		{watch.Added, namespace("a", map[string]string{"k": "v"})},
		{watch.Modified, namespace("b", map[string]string{"long": long})},
		{watch.Deleted, namespace("c", nil)},
	}
	checkReceived(t, got, want)
}

func checkReceived(t *testing.T, got, want []received) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		w := want[i].obj.DeepCopyObject()
		// client-go's decoder leaves apiVersion and kind unset.
		w.GetObjectKind().SetGroupVersionKind(w.GetObjectKind().GroupVersionKind().GroupKind().WithVersion("").GroupVersion().WithKind(""))
		gotJSON, _ := json.Marshal(got[i].obj)
		wantJSON, _ := json.Marshal(w)
		if got[i].typ != want[i].typ || !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("event %d: got %s %s, want %s %s", i, got[i].typ, gotJSON, want[i].typ, wantJSON)
		}
	}
}

func TestOtherObjectsAreDecodedAsClientGoDoes(t *testing.T) {
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
		Reason: metav1.StatusReasonExpired, Code: 410, Message: "too old resource version"}
	// A Status as the API server writes it: struct order, kind first.
	raw, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	// A Secret's keys sorted put data before kind.
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Data: map[string][]byte{"k": []byte("v")}}
	stream := `{"type":"ERROR","object":` + string(raw) + "}\n" + event(t, watch.Added, secret)
	decoded = 0
	got, err := decodeStream(t, stream)
	if err != nil {
		t.Fatal(err)
	}
	if decoded != 0 {
		t.Errorf("the kind's decoder decoded %d objects of other kinds", decoded)
	}
	checkReceived(t, got, []received{{watch.Error, status}, {watch.Added, secret}})
}

func TestAStreamNotFramedByLinesIsReadAsClientGoReadsIt(t *testing.T) {
	a, b := namespace("a", map[string]string{"k": "v"}), namespace("b", nil)
	first := event(t, watch.Added, a)
	var indented bytes.Buffer
	if err := json.Indent(&indented, []byte(event(t, watch.Modified, b)), "", "  "); err != nil {
		t.Fatal(err)
	}
	// One event per line first, then indented JSON, then two on one line.
	stream := first + indented.String() + "\n" + strings.TrimSuffix(first, "\n") + strings.TrimSuffix(first, "\n")
	got, err := decodeStream(t, stream)
	if err != nil {
		t.Fatal(err)
	}
	checkReceived(t, got, []received{{watch.Added, a}, {watch.Modified, b}, {watch.Added, a}, {watch.Added, a}})
}

func TestEnvelopesOfAnotherShapeAreDecodedAsClientGoDoes(t *testing.T) {
	cm := namespace("a", nil)
	line := event(t, watch.Added, cm)
	obj := strings.TrimSuffix(strings.TrimPrefix(line, `{"type":"ADDED","object":`), "}\n")
	for name, stream := range map[string]string{
		"a field after the object": strings.TrimSuffix(line, "}\n") + `,"x":1}` + "\n",
		"object first":             `{"object":` + obj + `,"type":"ADDED"}` + "\n",
		"spaces":                   `{"type": "ADDED", "object": ` + obj + "}\n",
		"escaped type":             `{"type":"ADD\u0045D","object":` + obj + "}\n",
		"an unknown type":          `{"type":"SOMETHING","object":` + obj + "}\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeStream(t, stream)
			if name == "an unknown type" {
				// Refused by client-go's watch decoder, whichever read it.
				if err == nil || !strings.Contains(err.Error(), "SOMETHING") {
					t.Fatalf("got %v, %v; want the unknown type refused", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkReceived(t, got, []received{{watch.Added, cm}})
		})
	}
}

func TestABrokenEventIsAnError(t *testing.T) {
	line := event(t, watch.Added, namespace("a", nil))
	for name, stream := range map[string]string{
		"cut short": line[:len(line)/2] + "}\n",
		// Never written by kube-apiserver, whose envelope ends with its
		// object; client-go would decode it.
		"an object after the object": strings.TrimSuffix(line, "}\n") + `,"x":{}}` + "\n",
		"not JSON at all":            "{\"type\":\"ADDED\",\"object\":{nope}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := decodeStream(t, stream); err == nil {
				t.Fatalf("decoded %v from a broken event", got)
			}
		})
	}
}
