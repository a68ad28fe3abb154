-- One database per service: no service reads another's tables.
CREATE DATABASE account;
CREATE DATABASE usage_ledger;
CREATE DATABASE x_builds;
CREATE DATABASE runs;
