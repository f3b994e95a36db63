// Package certrotation owns a webhook's serving certificate when no
// certificate manager supplies one: a self-signed CA and a serving
// certificate kept in one Secret (so every replica serves the same), made
// when missing or unusable and renewed before they expire, on an injected
// clock. It keeps the loaded certificate for the TLS server and the CA bundle
// callers trust; it writes nothing but its Secret.
package certrotation
