-- The shop's stock at start. The signed print is the one of its kind: the second order of it is refused.
insert into stock (item, available) values ('coffee beans', 40);
insert into stock (item, available) values ('mug', 12);
insert into stock (item, available) values ('tote bag', 8);
insert into stock (item, available) values ('signed print', 1);
-- the live traffic's orders after the scenario (samples.exit-when-done=false)
insert into stock (item, available) values ('gift card', 1000000);
