package main

import (
	"buddi/core/seal"
	"buddi/dbsource"
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

// openSealed opens the database with the seal key, for the commands that write or read rows
// carrying the owner's authority.
func openSealed(env *runEnv) (seal.Key, *dbsource.Source, error) {
	key, err := loadSeal()
	if err != nil {
		return seal.Key{}, nil, err
	}
	src, err := openActions(env)
	if err != nil {
		return seal.Key{}, nil, err
	}
	return key, src, nil
}
