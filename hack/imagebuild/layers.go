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

package main

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The user the binaries run as, as in the chart's securityContext.
const (
	nonrootUID  = 65532
	nonrootName = "nonroot"
)

// CABundlePath is where Go's crypto/x509 looks first on Linux.
const CABundlePath = "etc/ssl/certs/ca-certificates.crt"

// entry is one file or directory of a layer.
type entry struct {
	name     string // relative path without a leading slash
	dir      bool
	mode     int64
	uid, gid int
	data     []byte
}

// baseEntries are the files every image carries besides its binary.
func baseEntries() []entry {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		fmt.Sprintf("%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n", nonrootName, nonrootUID, nonrootUID, nonrootName, nonrootName)
	group := "root:x:0:\nnobody:x:65534:\n" + fmt.Sprintf("%s:x:%d:\n", nonrootName, nonrootUID)
	return []entry{
		{name: "etc", dir: true, mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/ssl", dir: true, mode: 0o755},
		{name: "etc/ssl/certs", dir: true, mode: 0o755},
		{name: CABundlePath, mode: 0o644, data: caBundle()},
		{name: "home", dir: true, mode: 0o755},
		{name: "home/" + nonrootName, dir: true, mode: 0o700, uid: nonrootUID, gid: nonrootUID},
		{name: "tmp", dir: true, mode: 0o1777},
	}
}

// caBundle is the PEM bundle of every unconstrained root of the NSS store
// that x509roots/fallback carries, in the order the module lists them.
func caBundle() []byte {
	var b bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})
	}
	return b.Bytes()
}

// binaryEntries is the layer of one binary: /<name>, mode 0755, owned by root.
func binaryEntries(name string, data []byte) []entry {
	return []entry{{name: name, mode: 0o755, data: data}}
}

// writeTar writes entries sorted by name, every header fixed but for name,
// mode, owner and size, so the same entries always give the same bytes.
func writeTar(w io.Writer, entries []entry, mtime time.Time) error {
	sorted := append([]entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	tw := tar.NewWriter(w)
	for _, e := range sorted {
		if e.name == "" || path.IsAbs(e.name) || path.Clean(e.name) != e.name || strings.HasPrefix(e.name, "..") {
			return fmt.Errorf("layer entry %q: not a clean relative path", e.name)
		}
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			Uname:   userName(e.uid),
			Gname:   userName(e.gid),
			ModTime: mtime,
			Format:  tar.FormatUSTAR,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
			h.Name += "/"
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("layer entry %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("layer entry %s: %w", e.name, err)
		}
	}
	return tw.Close()
}

func userName(id int) string {
	switch id {
	case 0:
		return "root"
	case nonrootUID:
		return nonrootName
	default:
		return ""
	}
}
