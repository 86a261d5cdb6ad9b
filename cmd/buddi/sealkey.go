package main

import (
	"buddi/core/seal"
)

// loadSeal reads the installation's seal key from the data directory (creating it the first
// time): the owner's command line seals what it grants with the key buddi serve checks.
func loadSeal() (seal.Key, error) {
	cfg, err := loadConfig()
	if err != nil {
		return seal.Key{}, err
	}
	return seal.Load(cfg.Home)
}
