//! `any_element(list_col, 'predicate')` as a DataFusion scalar UDF.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_datafusion_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// The `any_element` scalar UDF: `any_element(list_col, 'predicate')` is TRUE for a row when
/// the SQL `predicate` over the fields of the list's struct elements is TRUE on some element,
/// NULL when the list is null or no element makes it TRUE but some makes it UNKNOWN, FALSE
/// otherwise. In the `WHERE` clause of a query on a [`crate::LakeseekTable`] it is answered
/// from the column's list element index when one applies; elsewhere it is evaluated row by
/// row by lakeseek's three-valued evaluator ([`lakeseek::evaluate_any_element`]).
///
/// ```
/// let ctx = datafusion::prelude::SessionContext::new();
/// ctx.register_udf(lakeseek_datafusion::any_element_udf());
/// ```
pub fn any_element_udf() -> ScalarUDF {
    ScalarUDF::new_from_impl(AnyElement {
        signature: Signature::any(2, Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct AnyElement {
    signature: Signature,
}

impl ScalarUDFImpl for AnyElement {
    fn name(&self) -> &str {
        "any_element"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types {
            [DataType::List(f) | DataType::LargeList(f), p]
                if matches!(f.data_type(), DataType::Struct(_))
                    && matches!(p, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) =>
            {
                Ok(DataType::Boolean)
            }
            [list, p] => plan_err!(
                "any_element(list_col, 'predicate') needs a list of structs and a string literal, got {list} and {p}"
            ),
            _ => plan_err!("any_element takes two arguments"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [list, predicate] = args.args.as_slice() else {
            return plan_err!("any_element takes two arguments");
        };
        let predicate = match predicate {
            ColumnarValue::Scalar(
                ScalarValue::Utf8(Some(p))
                | ScalarValue::LargeUtf8(Some(p))
                | ScalarValue::Utf8View(Some(p)),
            ) => p.clone(),
            _ => return plan_err!("any_element's predicate must be a non-null string literal"),
        };
        let evaluate = |array: &dyn Array| -> Result<BooleanArray> {
            lakeseek::evaluate_any_element(array, &predicate)
                .map_err(|e| exec_datafusion_err!("any_element(.., {predicate:?}): {e}"))
        };
        match list {
            ColumnarValue::Array(array) => Ok(ColumnarValue::Array(Arc::new(evaluate(
                array.as_ref(),
            )?) as ArrayRef)),
            ColumnarValue::Scalar(scalar) => {
                let array = scalar.to_array()?;
                let truth = evaluate(array.as_ref())?;
                Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                    &truth, 0,
                )?))
            }
        }
    }
}
