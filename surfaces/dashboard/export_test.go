package dashboard

import "buddi/internal/sockowner"

// PeerUID is the lookup refusals record, for the test that reads a connection's account.
var PeerUID = sockowner.PeerUID
