-- Webhook deliveries are dialed for the caller that registered the endpoint: an operator's may reach loopback
-- and private addresses where the egress policy allows operators to (CONTRACTS, Egress).
ALTER TABLE webhook_endpoints ADD COLUMN dial_as text NOT NULL DEFAULT 'tenant';
