//! `errand demo seed`: the demo tables the shipped export job types read
//! (`sales`, `creator_earnings`, both with a tenant column), filled with
//! plausible rows by PostgreSQL itself, so that a new user can run an export
//! within a minute of cloning.

use crate::store::{Store, StoreError};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sales (
    id          bigserial PRIMARY KEY,
    tenant_id   text NOT NULL,
    sold_at     date NOT NULL,
    customer    text NOT NULL,
    product     text NOT NULL,
    quantity    integer NOT NULL,
    unit_price  numeric(10, 2) NOT NULL,
    status      text NOT NULL
);
-- In the export's key order (its ORDER BY, the type's resume_key): a read
-- that goes on after a key finds the next row without sorting the rest.
DROP INDEX IF EXISTS sales_tenant_sold_at;
CREATE INDEX IF NOT EXISTS sales_tenant_sold_at_id ON sales (tenant_id, sold_at, id);
CREATE TABLE IF NOT EXISTS creator_earnings (
    id          bigserial PRIMARY KEY,
    tenant_id   text NOT NULL,
    creator_id  text NOT NULL,
    earned_on   date NOT NULL,
    source      text NOT NULL,
    amount      numeric(10, 2) NOT NULL,
    currency    text NOT NULL
);
DROP INDEX IF EXISTS creator_earnings_tenant_earned_on;
CREATE INDEX IF NOT EXISTS creator_earnings_tenant_key
    ON creator_earnings (tenant_id, earned_on, creator_id, id);
";

/// The name of demo tenant `n` (1-based): `demo-1`, `demo-2`, …
pub fn tenant_name(n: u32) -> String {
    format!("demo-{n}")
}

/// Creates the demo tables if needed and adds `rows` rows per tenant to each,
/// dated over the past year. Returns the rows added per table.
pub async fn seed(store: &Store, tenants: u32, rows: u64) -> Result<u64, StoreError> {
    let client = store.pool().get().await?;
    client.batch_execute(SCHEMA).await?;
    let total = i64::from(tenants) * i64::try_from(rows).unwrap_or(i64::MAX);
    let tenants = i64::from(tenants.max(1));
    client
        .execute(
            "INSERT INTO sales (tenant_id, sold_at, customer, product, quantity, unit_price, status) \
             SELECT 'demo-' || (1 + i % $1::bigint), current_date - (i % 365)::int, \
                    (ARRAY['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson', \
                           'Edsger Dijkstra', 'Barbara Liskov', 'Donald Knuth', 'Frances Allen'])[1 + i % 8], \
                    (ARRAY['Notebook', 'Fountain pen', 'Desk lamp', 'Backpack', 'Coffee mug', \
                           'Headphones', 'Keyboard', 'Plant pot'])[1 + (i / 8) % 8], \
                    1 + (i % 5), round((4.99 + (i * 37 % 9500) / 100.0)::numeric, 2), \
                    CASE WHEN i % 25 = 0 THEN 'refunded' WHEN i % 10 = 0 THEN 'pending' ELSE 'paid' END \
             FROM generate_series(0, $2::bigint - 1) AS i",
            &[&tenants, &total],
        )
        .await?;
    client
        .execute(
            "INSERT INTO creator_earnings (tenant_id, creator_id, earned_on, source, amount, currency) \
             SELECT 'demo-' || (1 + i % $1::bigint), 'creator-' || (1 + (i / $1::bigint) % 40), current_date - (i % 365)::int, \
                    (ARRAY['subscription', 'tip', 'course sale', 'affiliate'])[1 + i % 4], \
                    round((1 + (i * 53 % 20000) / 100.0)::numeric, 2), 'EUR' \
             FROM generate_series(0, $2::bigint - 1) AS i",
            &[&tenants, &total],
        )
        .await?;
    client.batch_execute("ANALYZE sales; ANALYZE creator_earnings").await?;
    Ok(u64::try_from(total).unwrap_or(0))
}
