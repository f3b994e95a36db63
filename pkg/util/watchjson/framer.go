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
	"bufio"
	"bytes"
	"errors"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// lineFramer frames a watch stream by lines: kube-apiserver ends each JSON
// watch event with a newline and puts none inside one.
type lineFramer struct{}

var _ runtime.Framer = lineFramer{}

// readSize is the read buffer of a stream: most events fit in it whole.
const readSize = 64 << 10

func (lineFramer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return &lineReader{body: r, r: bufio.NewReaderSize(r, readSize)}
}

func (lineFramer) NewFrameWriter(w io.Writer) io.Writer { return w }

// lineReader returns one event per Read, as frame readers do: a frame
// longer than the caller's buffer comes in parts, each part but the last
// with io.ErrShortBuffer.
type lineReader struct {
	body io.ReadCloser
	r    *bufio.Reader
	// long gathers a line longer than the read buffer.
	long []byte
	// rest is what is left of the frame being returned.
	rest []byte
	// other is client-go's JSON framer, once the stream turned out not to
	// be one event per line: it reads the rest of the stream.
	other io.ReadCloser
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.other != nil {
		return l.other.Read(p)
	}
	if len(l.rest) == 0 {
		line, err := l.next()
		if err != nil {
			return 0, err
		}
		if !isEvent(line) {
			// Not one event per line (say, indented JSON): client-go's
			// framer reads the stream from this line on.
			l.other = json.Framer.NewFrameReader(readCloser{io.MultiReader(bytes.NewReader(bytes.Clone(line)), l.r), l.body})
			return l.other.Read(p)
		}
		l.rest = line
	}
	n := copy(p, l.rest)
	l.rest = l.rest[n:]
	if len(l.rest) > 0 {
		return n, io.ErrShortBuffer
	}
	return n, nil
}

// next is the next line that is not blank, without its line break. It
// stays valid until the next call.
func (l *lineReader) next() ([]byte, error) {
	for {
		line, err := l.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			l.long = append(l.long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = l.r.ReadSlice('\n')
				l.long = append(l.long, line...)
			}
			line = l.long
		}
		if err != nil && (!errors.Is(err, io.EOF) || len(bytes.TrimSpace(line)) == 0) {
			return nil, err
		}
		if line = bytes.TrimRight(line, " \t\r\n"); len(line) > 0 {
			return line, nil
		}
	}
}

func (l *lineReader) Close() error { return l.body.Close() }

// isEvent reports whether line can be a whole watch event as kube-apiserver
// writes it.
func isEvent(line []byte) bool {
	return bytes.HasPrefix(line, typeKey) && line[len(line)-1] == '}'
}

type readCloser struct {
	io.Reader
	io.Closer
}
