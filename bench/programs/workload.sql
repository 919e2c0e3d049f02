-- workload.sql: an SQL workload for the sqlite3 shell, run on an in-memory
-- database: inserts, indexes, joins, aggregates, sorting, updates,
-- deletes. The harness replaces ROWS by the row count before running it.
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
CREATE TABLE item(id INTEGER PRIMARY KEY, title TEXT, price REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, item INTEGER, qty INTEGER, note TEXT);

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ROWS / 10 + 10)
INSERT INTO customer SELECT i, 'customer-' || i, 'city-' || (i % 37) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO item SELECT i, printf('item %03d', i), round((i * 37 % 1000) / 10.0, 2) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ROWS)
INSERT INTO orders SELECT i, (i * 7919) % (ROWS / 10 + 10) + 1, (i * 104729) % 500 + 1, i % 9 + 1,
  substr(hex(i * 2654435761 % 1000000007), 1, i % 13 + 3) FROM n;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_item ON orders(item, qty);
CREATE INDEX orders_note ON orders(note);

SELECT count(*), sum(qty) FROM orders;
SELECT c.city, count(*) AS n, sum(o.qty * i.price) AS revenue
  FROM orders o JOIN customer c ON c.id = o.customer JOIN item i ON i.id = o.item
  GROUP BY c.city ORDER BY revenue DESC LIMIT 5;
SELECT c.name, count(o.id) AS n FROM customer c LEFT JOIN orders o ON o.customer = c.id
  GROUP BY c.id ORDER BY n DESC, c.name LIMIT 5;
SELECT note, count(*) FROM orders GROUP BY note ORDER BY 2 DESC, 1 LIMIT 5;
SELECT group_concat(title, ';') IS NOT NULL FROM (SELECT title FROM item ORDER BY price DESC);
SELECT count(*) FROM (SELECT customer, item, sum(qty) FROM orders GROUP BY customer, item);

UPDATE orders SET note = upper(note) || '!' WHERE id % 3 = 0;
DELETE FROM orders WHERE qty = 9;
CREATE TABLE summary AS SELECT customer, count(*) AS n, group_concat(note) AS notes FROM orders GROUP BY customer;
SELECT count(*), max(n), sum(length(notes)) FROM summary;
SELECT count(*) FROM orders o1 JOIN orders o2 ON o2.customer = o1.customer AND o2.id = o1.id + 1;
