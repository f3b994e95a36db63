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

// Package watchjson reads the JSON watch streams of chosen custom resources
// with fewer passes over each event than client-go's general decoder.
//
// Custom resources are served in JSON only. For every watch event, client-go
// scans the event's bytes to find where it ends, once more to read the
// envelope's apiVersion and kind (it has none), once more to decode the
// envelope, again to read the object's apiVersion and kind, and once more to
// decode the object. kube-apiserver writes each JSON watch event on one line,
// as {"type":...,"object":...}, and a custom resource's keys in sorted
// order, so the frame, the envelope and the object's kind can be read from
// the ends of the line: the object is then decoded once.
//
// Whatever does not look exactly like that is decoded by client-go's own
// decoder: a stream not framed by lines, an envelope of another shape, an
// object of another kind (the Status of an ERROR event). So a stream this
// package does not expect is read as client-go would read it, only slower.
//
// It owns nothing but the decoding: the informer built with it lists and
// watches like any other (see NewInformer).
package watchjson
