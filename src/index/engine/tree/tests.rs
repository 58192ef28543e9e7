use super::*;
use crate::index::sql::bind::BoundPredicate;
use crate::lance::dataset::Schema;
use crate::lance::proto::table as pb;

fn schema() -> Schema {
    let f = |name: &str, id: i32, t: &str| pb::Field {
        name: name.into(),
        id,
        parent_id: -1,
        logical_type: t.into(),
        nullable: true,
        ..Default::default()
    };
    Schema::from_proto(&[f("a", 0, "int64"), f("b", 1, "string"), f("c", 2, "double")]).unwrap()
}

fn shape_of(text: &str) -> Shape {
    shape(
        &BoundPredicate::parse_filter(text, &schema())
            .unwrap()
            .predicate,
    )
}

#[test]
fn one_column_subtrees_are_one_leaf() {
    let s = shape_of("a = 1 OR a IS NULL OR NOT (a > 5)");
    assert_eq!(s.root, Node::Leaf(0));
    assert_eq!(s.leaves.len(), 1);
    assert_eq!(s.leaves[0].want, Want::True);
}

#[test]
fn not_is_pushed_to_the_leaves() {
    let s = shape_of("NOT (a = 1 AND (b = 'x' OR c < 2))");
    assert_eq!(
        s.root,
        Node::Or(vec![
            Node::Leaf(0),
            Node::And(vec![Node::Leaf(1), Node::Leaf(2)])
        ])
    );
    assert!(s.leaves.iter().all(|l| l.want == Want::False));
    let s = shape_of("(a = 1 OR b = 'x') IS NOT TRUE");
    assert_eq!(
        s.root,
        Node::Complement(Box::new(Node::Or(vec![Node::Leaf(0), Node::Leaf(1)])))
    );
}

fn set(v: &[u64]) -> RoaringTreemap {
    v.iter().copied().collect()
}

#[test]
fn set_algebra_is_three_valued() {
    let universe = set(&[0, 1, 2, 3]);
    let leaves = vec![
        Rows {
            sure: set(&[0, 1]),
            maybe: set(&[]),
        },
        Rows {
            sure: set(&[1]),
            maybe: set(&[2]),
        },
    ];
    let and = combine(
        &Node::And(vec![Node::Leaf(0), Node::Leaf(1)]),
        &leaves,
        &universe,
    );
    assert_eq!((and.sure, and.maybe), (set(&[1]), set(&[])));
    let or = combine(
        &Node::Or(vec![Node::Leaf(0), Node::Leaf(1)]),
        &leaves,
        &universe,
    );
    assert_eq!((or.sure, or.maybe), (set(&[0, 1]), set(&[2])));
    let not = combine(
        &Node::Complement(Box::new(Node::Leaf(1))),
        &leaves,
        &universe,
    );
    assert_eq!((not.sure, not.maybe), (set(&[0, 3]), set(&[2])));
}

#[test]
fn unindexed_leaves_need_a_bound() {
    let answered = |i: usize| i == 0;
    let s = shape_of("a = 1 AND b = 'x'");
    assert!(bounded(&s.root, &answered));
    let s = shape_of("a = 1 OR b = 'x'");
    assert!(!bounded(&s.root, &answered));
    let s = shape_of("NOT (a = 1)");
    assert!(bounded(&s.root, &answered));
}

#[test]
fn between_searches_one_range() {
    let s = shape_of("c BETWEEN 1 AND 2");
    let q = index_query(&s.leaves[0].predicate).unwrap();
    assert!(matches!(
        q,
        Predicate::Leaf(Leaf {
            query: LeafQuery::Range {
                lower: Bound::Included(_),
                upper: Bound::Included(_)
            },
            ..
        })
    ));
}
