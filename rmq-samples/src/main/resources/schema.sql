-- The sample's shop database: an in-memory H2 that Spring Boot makes at start (H2 on the class path, no
-- spring.datasource.url) and fills from this file and data.sql. Gone when the sample exits.

-- Orders (io.rmq.samples.order.OrderBook). Times are epoch milliseconds; 0: not yet.
create table orders (
    seq          bigint generated always as identity,
    id           varchar(20) primary key,
    item         varchar(40) not null,
    amount_cents bigint not null,
    deadline     bigint not null,
    status       varchar(10) not null,
    paid_at      bigint default 0 not null,
    closed_at    bigint default 0 not null,
    checked_at   bigint default 0 not null
);

-- What is left to sell of each item (io.rmq.samples.order.OrderPlacement takes one per order).
create table stock (
    item      varchar(40) primary key,
    available int not null check (available >= 0)
);
