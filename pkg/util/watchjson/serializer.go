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
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

var (
	typeKey   = []byte(`{"type":"`)
	objectKey = []byte(`,"object":`)
)

// Kind is a kind whose objects are decoded here: Decode turns the JSON of
// one object of it into a new typed object with no apiVersion and kind set,
// as client-go's decoder leaves them. kube-apiserver writes a custom
// resource's keys sorted: its objects are known by beginning with apiVersion
// and kind, so the kind must have no other top-level field that sorts
// before "kind" (a custom resource's are metadata, spec and status).
type Kind struct {
	GroupVersionKind schema.GroupVersionKind
	Decode           func(data []byte) (runtime.Object, error)
}

// prefix is how the JSON of an object of k begins.
func (k Kind) prefix() []byte {
	return fmt.Appendf(nil, `{"apiVersion":%q,"kind":%q,`, k.GroupVersionKind.GroupVersion().String(), k.GroupVersionKind.Kind)
}

// codecs is client-go's JSON decoding for the scheme, with this package's
// decoding of the watch events of kind in front of it: what does not look
// like an event of kind is decoded by client-go's.
type codecs struct {
	serializer.WithoutConversionCodecFactory
	kind   Kind
	prefix []byte
	// media is client-go's JSON, its streams read by lines.
	media []runtime.SerializerInfo
}

var _ runtime.NegotiatedSerializer = codecs{}

func newCodecs(scheme *runtime.Scheme, kind Kind) (codecs, error) {
	f := serializer.NewCodecFactory(scheme)
	info, ok := runtime.SerializerInfoForMediaType(f.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok || info.StreamSerializer == nil {
		return codecs{}, fmt.Errorf("the scheme serves no streams of %s", runtime.ContentTypeJSON)
	}
	stream := *info.StreamSerializer
	stream.Serializer, stream.Framer = envelope{json: info.StreamSerializer.Serializer}, lineFramer{}
	info.StreamSerializer = &stream
	return codecs{WithoutConversionCodecFactory: serializer.WithoutConversionCodecFactory{CodecFactory: f}, kind: kind, prefix: kind.prefix(),
		media: []runtime.SerializerInfo{info}}, nil
}

// SupportedMediaTypes is JSON alone, its streams read by lines.
func (c codecs) SupportedMediaTypes() []runtime.SerializerInfo { return c.media }

// DecoderToVersion decodes objects of kind here, others as client-go does.
func (c codecs) DecoderToVersion(s runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return objects{codecs: c, other: c.WithoutConversionCodecFactory.DecoderToVersion(s, gv)}
}

// envelope decodes a watch event's envelope, {"type":...,"object":...},
// leaving the object's bytes to be decoded by objects.
type envelope struct {
	json runtime.Serializer
}

var _ runtime.Serializer = envelope{}

func (e envelope) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	ev, ok := into.(*metav1.WatchEvent)
	if !ok {
		return e.json.Decode(data, defaults, into)
	}
	typ, object, ok := splitEvent(data)
	if !ok {
		return e.json.Decode(data, defaults, into)
	}
	// The object's bytes are the stream decoder's, read again only for the
	// next event: the object is decoded before (watch.Decoder).
	ev.Type, ev.Object = typ, runtime.RawExtension{Raw: object}
	gvk := metav1.SchemeGroupVersion.WithKind("WatchEvent")
	return ev, &gvk, nil
}

func (e envelope) Encode(obj runtime.Object, w io.Writer) error { return e.json.Encode(obj, w) }

func (e envelope) Identifier() runtime.Identifier { return e.json.Identifier() }

// splitEvent reads a watch event as kube-apiserver writes it: a known
// event type first, then the object, last. Any other is left to client-go.
func splitEvent(data []byte) (typ string, object []byte, ok bool) {
	rest, found := bytes.CutPrefix(data, typeKey)
	if !found {
		return "", nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return "", nil, false
	}
	if typ = eventType(rest[:end]); typ == "" {
		return "", nil, false
	}
	object, found = bytes.CutPrefix(rest[end+1:], objectKey)
	if !found || len(object) < 3 || object[0] != '{' || object[len(object)-1] != '}' || object[len(object)-2] != '}' {
		return "", nil, false
	}
	return typ, object[:len(object)-1], true
}

// eventType is the constant of a known event type, so that decoding one
// allocates nothing; "" for any other.
func eventType(name []byte) string {
	switch string(name) {
	case "ADDED":
		return "ADDED"
	case "MODIFIED":
		return "MODIFIED"
	case "DELETED":
		return "DELETED"
	case "BOOKMARK":
		return "BOOKMARK"
	case "ERROR":
		return "ERROR"
	}
	return ""
}

// objects decodes the objects of watch events: those of kind with
// kind.Decode, any other as client-go does.
type objects struct {
	codecs
	other runtime.Decoder
}

func (o objects) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into != nil || !bytes.HasPrefix(data, o.prefix) {
		return o.other.Decode(data, defaults, into)
	}
	obj, err := o.kind.Decode(data)
	if err != nil {
		return nil, nil, err
	}
	gvk := o.kind.GroupVersionKind
	return obj, &gvk, nil
}
