package dashboard

// PeerUID is peerUID, for the test that reads a connection's account.
var PeerUID = peerUID
