package gateway

import "buddi/plugins"

// Manifests are the plugins compiled into this build. The composition root is the one place
// that names them; core never imports a plugin.
func Manifests() []plugins.Manifest {
	return nil
}
