// Package kubectlplugin tests `kubectl koord-queue` (pkg/kubectlplugin)
// against envtest's real kube-apiserver with the scheduler running in-process
// and no visibility API: the plugin reads the objects only.
package kubectlplugin
